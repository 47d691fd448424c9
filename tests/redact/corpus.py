#!/usr/bin/env python3
"""The redactor's corpora (docs/REDACTION.md, "Accuracy"), generated, so that
no real credential is ever committed and every run sees the same bytes.

true_items(): secrets in their real formats (lengths, alphabets, prefixes,
and the CRC32 checksums GitHub's and npm's tokens carry) inside the
contexts they turn up in: .env files, YAML and JSON configs, shell
history, log lines, stack traces, HTTP headers, source code,
docker-compose, Kubernetes secrets in plain text, curl commands; and the
same encoded as tools print them (base64 and hex, wrapped, in JSON, cut
out of a longer run: kind "encoded", the whole run being the span). Each
item: (kind, text, [(start, length), ...]), the spans being the secret's
bytes that must be redacted.

lookalike_items(): what must not be flagged: git SHAs and other digests in
their usual places, UUIDs, base64 of images and of ordinary text,
package-lock integrity values, placeholders, AWS's documented example
keys, URLs without passwords, long identifiers, minified JS, paths,
public keys and certificates, and base64 or hex of text that holds no
secret (kind "encoded_text"). Each item: (kind, text).

Usage: corpus.py true|lookalike|bench OUT [MB]   (writes OUT and OUT.spans.json)
"""
import base64
import binascii
import hashlib
import json
import random
import string
import sys
import uuid

import vendors

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"


def rs(r, alphabet, n):
    return "".join(r.choice(alphabet) for _ in range(n))


def base62(n, width):
    out = ""
    while n:
        out = B62[n % 62] + out
        n //= 62
    return out.rjust(width, "0")


def crc_token(r, prefix):
    """GitHub's ghp_ (and npm's npm_): 30 random base62, then CRC32 of them in base62."""
    body = rs(r, ALNUM, 30)
    return prefix + body + base62(binascii.crc32(body.encode()) & 0xFFFFFFFF, 6)


def password(r):
    """A password as people choose them, or as generators make them."""
    kind = r.randrange(4)
    if kind == 0:
        words = ["Summer", "Winter", "Dragon", "Monkey", "Coffee", "Sunshine", "Rocket", "Falcon",
                 "Tiger", "Purple", "Ocean", "Maple", "Silver", "Thunder"]
        return r.choice(words) + str(r.randrange(10, 9999)) + r.choice("!@#$%&*?")
    if kind == 1:
        return rs(r, ALNUM + "!@#%^*-_+", r.randrange(12, 33))
    if kind == 2:
        return rs(r, ALNUM, r.randrange(16, 41))
    w = ["correct", "horse", "battery", "staple", "purple", "monkey", "dish", "washer"]
    return "-".join(r.choice(w) for _ in range(3)) + str(r.randrange(10, 99))


def b64(r, nbytes):
    return base64.b64encode(bytes(r.randrange(256) for _ in range(nbytes))).decode()


def b64url(r, nbytes):
    return base64.urlsafe_b64encode(bytes(r.randrange(256) for _ in range(nbytes))).decode().rstrip("=")


def wrap64(s):
    return "\n".join(s[i:i + 64] for i in range(0, len(s), 64))


def jwt(r):
    head = base64.urlsafe_b64encode(json.dumps({"alg": r.choice(["HS256", "RS256", "ES256"]),
                                                "typ": "JWT"}).encode()).decode().rstrip("=")
    claims = {"sub": str(r.randrange(10**9)), "name": r.choice(["Ada", "Linus", "Grace"]),
              "iat": 1700000000 + r.randrange(10**7), "scope": "read write"}
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return head + "." + body + "." + b64url(r, r.choice([32, 64, 256]))


def pem(r, escaped=False):
    label = r.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                      "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY"])
    body = base64.b64encode(b"\x30\x82" + bytes(r.randrange(256) for _ in range(r.choice([121, 600, 1190])))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    nl = "\\n" if escaped else "\n"
    return "-----BEGIN " + label + "-----" + nl + nl.join(lines) + nl + "-----END " + label + "-----"


def secret_of(r, kind):
    """(secret, name for the env/config key)"""
    if kind == "aws_access_key_id":
        return r.choice(["AKIA", "ASIA"]) + rs(r, B32, 16), "AWS_ACCESS_KEY_ID"
    if kind == "aws_secret_access_key":
        return rs(r, ALNUM + "+/", 40), "AWS_SECRET_ACCESS_KEY"
    if kind == "gcp_api_key":
        return "AIza" + rs(r, B64URL, 35), "GOOGLE_API_KEY"
    if kind == "github_token":
        if r.randrange(5) == 0:
            return "github_pat_" + rs(r, ALNUM, 22) + "_" + rs(r, ALNUM, 59), "GITHUB_TOKEN"
        return crc_token(r, r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])), "GITHUB_TOKEN"
    if kind == "gitlab_token":
        return "glpat-" + rs(r, B64URL, 20), "GITLAB_TOKEN"
    if kind == "slack_token":
        if r.randrange(2):
            return "xoxb-%d-%d-%s" % (r.randrange(10**11, 10**12), r.randrange(10**12, 10**13),
                                      rs(r, ALNUM, 24)), "SLACK_BOT_TOKEN"
        return "xoxp-%d-%d-%d-%s" % (r.randrange(10**11, 10**12), r.randrange(10**11, 10**12),
                                     r.randrange(10**12, 10**13), rs(r, HEX, 32)), "SLACK_TOKEN"
    if kind == "stripe_key":
        return r.choice(["sk_live_", "rk_live_", "sk_test_"]) + rs(r, ALNUM, r.choice([24, 99])), "STRIPE_SECRET_KEY"
    if kind == "openai_key":
        if r.randrange(3) == 0:
            return "sk-" + rs(r, ALNUM, 20) + "T3BlbkFJ" + rs(r, ALNUM, 20), "OPENAI_API_KEY"
        return "sk-proj-" + rs(r, B64URL, 74) + "T3BlbkFJ" + rs(r, B64URL, 74), "OPENAI_API_KEY"
    if kind == "anthropic_key":
        return "sk-ant-api03-" + rs(r, B64URL, 93) + "AA", "ANTHROPIC_API_KEY"
    if kind == "npm_token":
        return crc_token(r, "npm_"), "NPM_TOKEN"
    if kind == "pypi_token":
        return "pypi-AgEIcHlwaS5vcmc" + b64url(r, 110), "PYPI_TOKEN"
    if kind == "sendgrid_key":
        return "SG." + rs(r, B64URL, 22) + "." + rs(r, B64URL, 43), "SENDGRID_API_KEY"
    if kind == "twilio_key":
        return "SK" + rs(r, HEX, 32), "TWILIO_API_KEY"
    if kind == "jwt":
        return jwt(r), "ACCESS_TOKEN"
    if kind == "high_entropy":
        return r.choice([rs(r, ALNUM, r.randrange(32, 65)), b64(r, 32), b64url(r, 24)]), "KEY"
    if kind == "password_assignment":
        return password(r), r.choice(["DB_PASSWORD", "password", "SECRET_KEY", "api_key", "client_secret",
                                      "REDIS_PASSWORD", "auth_token", "MYSQL_ROOT_PASSWORD", "smtp_pass",
                                      "ADMIN_PASSWORD", "jwt_secret", "apiKey", "accessToken"])
    raise ValueError(kind)


ANCHORED = ["aws_access_key_id", "aws_secret_access_key", "gcp_api_key", "github_token", "gitlab_token",
            "slack_token", "stripe_key", "openai_key", "anthropic_key", "npm_token", "pypi_token",
            "sendgrid_key", "twilio_key", "jwt", "password_assignment"]


def in_context(r, kind):
    """A secret of kind inside one of the places it turns up: (text, start, secret)."""
    s, name = secret_of(r, kind)
    lname = name.lower()
    ts = "2026-11-%02dT%02d:%02d:%02d.%03dZ" % (r.randrange(1, 29), r.randrange(24), r.randrange(60),
                                                r.randrange(60), r.randrange(1000))
    keyed = [
        "%s=%s\n",                                    # .env
        "export %s=%s\n",                             # shell history
        "export %s=\"%s\"\n",
        "  %s: %s\n",                                 # YAML
        "  \"%s\": \"%s\",\n",                        # JSON
        "      - %s=%s\n",                            # docker-compose environment
        "  %s: \"%s\"\n",                             # k8s stringData
        "%s = '%s'\n",                                # Python settings
        "const %s = \"%s\";\n",                       # JS
        "\t%s := \"%s\"\n",                           # Go
        "[default]\n%s = %s\n",                       # ini
    ]
    bare = [
        ts + " INFO  client initialised with %s\n",
        "curl -H \"Authorization: Bearer %s\" https://api.example.org/v2/items\n",
        "Authorization: Bearer %s\r\nAccept: application/json\r\n",
        "$ git clone https://x-access-token:%s@github.com/acme/infra.git\n",
        ts + " DEBUG request headers={'Authorization': 'Bearer %s', 'User-Agent': 'python-requests/2.31'}\n",
        "Traceback (most recent call last):\n  File \"app.py\", line 42, in <module>\n    client = Client(\"%s\")\nRuntimeError: rate limited\n",
        "mycli --auth %s deploy --env prod\n",
        "docker run -e TOKEN %s acme/worker:1.4\n",
    ]
    if kind in ("high_entropy",):
        t = r.choice([bare[0], bare[1], bare[2], bare[5], bare[6], bare[7],
                      "  args: [\"--key\", \"%s\"]\n", "    - %s\n"])
        return t, s
    if kind == "password_assignment" or kind == "aws_secret_access_key":
        t = r.choice(keyed)
        return t.replace("%s", name, 1), s
    t = r.choice(keyed + bare)
    if t in keyed:
        return t.replace("%s", name if r.randrange(2) else lname, 1), s
    return t, s


def special(r, kind):
    """Kinds whose context is part of the format: (text, [secrets in order])."""
    if kind == "other_context":
        return other_context(r)
    if kind == "gcp_service_account":
        kid = rs(r, HEX, 40)
        key = pem(r, escaped=True).replace("RSA PRIVATE KEY", "PRIVATE KEY").replace("EC PRIVATE KEY", "PRIVATE KEY")
        text = ('{\n  "type": "service_account",\n  "project_id": "acme-prod-%d",\n  "private_key_id": "%s",\n'
                '  "private_key": "%s\\n",\n  "client_email": "deploy@acme-prod.iam.gserviceaccount.com",\n'
                '  "client_id": "%d"\n}\n' % (r.randrange(1000), kid, key, r.randrange(10**20)))
        return text, [kid, key + "\\n"]
    if kind == "azure_storage_key":
        k = b64(r, 64)
        acct = "acme%dstore" % r.randrange(1000)
        t = r.choice([
            "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net\n",
            "  \"ConnectionStrings\": { \"Blob\": \"DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s\" }\n",
            "az storage blob list --account-name %s --account-key %s -c logs\n"])
        return t % (acct, k), [k]
    if kind == "slack_webhook":
        path = "T%s/B%s/%s" % (rs(r, string.ascii_uppercase + string.digits, 10),
                               rs(r, string.ascii_uppercase + string.digits, 10), rs(r, ALNUM, 24))
        t = r.choice(["SLACK_WEBHOOK_URL=https://hooks.slack.com/services/%s\n",
                      "curl -X POST -d '{\"text\":\"deploy done\"}' https://hooks.slack.com/services/%s\n",
                      "  webhook: \"https://hooks.slack.com/services/%s\"\n"])
        return t % path, [path]
    if kind == "private_key":
        k = pem(r)
        t = r.choice(["$ cat ~/.ssh/id_rsa\n%s\n", "  tls.key: |\n    %s\n", "%s\n"])
        if "tls.key" in t:
            k = k.replace("\n", "\n    ")
        return t % k, [k]
    if kind == "url_password":
        pw = password(r).replace("@", "%40").replace("/", "%2F").replace(":", "%3A").replace("#", "%23").replace("?", "%3F")
        scheme, port = r.choice([("postgres", 5432), ("postgresql", 5432), ("mysql", 3306), ("mongodb", 27017),
                                 ("redis", 6379), ("amqp", 5672), ("https", 443), ("ftp", 21), ("mongodb+srv", 0)])
        host = r.choice(["db.internal", "10.0.%d.%d" % (r.randrange(256), r.randrange(256)),
                         "prod-cluster.abc123.us-east-1.rds.amazonaws.com", "cache"])
        url = "%s://%s:%s@%s%s/%s" % (scheme, r.choice(["admin", "app", "root", "svc_reader"]), pw, host,
                                      (":%d" % port) if port else "", r.choice(["app", "orders", "0", ""]))
        t = r.choice(["DATABASE_URL=%s\n", "  url: \"%s\"\n", "ERROR could not connect to %s: timeout\n",
                      "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) %s refused\n",
                      "psql %s -c 'select 1'\n"])
        return t % url, [pw]
    if kind == "connection_string":
        pw = password(r).replace(";", "!")
        t = r.choice([
            "Server=tcp:acme.database.windows.net,1433;Initial Catalog=orders;User ID=app;Password=%s;Encrypt=True;\n",
            "jdbc:sqlserver://db.internal:1433;databaseName=orders;user=app;password=%s;encrypt=true\n",
            "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd=%s;\n",
            "  \"DefaultConnection\": \"Host=db;Database=orders;Username=app;Password=%s\"\n",
            "jdbc:mysql://db.internal:3306/orders?user=app&password=%s&useSSL=true\n"])
        return t % pw, [pw]
    raise ValueError(kind)


def other_context(r):
    """Secrets in places no key or prefix announces them: what a redactor
    misses first. Kept in the corpus so that its figure stays honest."""
    pw = password(r)
    hexkey = rs(r, HEX, r.choice([32, 40, 64]))
    t, s = r.choice([
        ("<password>%s</password>\n", pw),
        ("mysql -u root -p'%s' orders < dump.sql\n", pw),
        ("curl -u admin:%s https://registry.example.org/v2/_catalog\n", pw),
        ("sshpass -p '%s' ssh deploy@10.0.3.7\n", pw),
        ("Authorization: Bearer %s\r\n", hexkey),
        ("datadog-agent --api-key %s\n", hexkey),
        ("  <add key=\"ApiSecret\" value=\"%s\" />\n", pw),
        ("PGPASSWORD='%s' psql -h db -U app\n", pw),
        # known misses (docs/REDACTION.md): a header no keyword names, a
        # lowercase passphrase, a password shorter than 8 bytes
        ("X-Client-Ref: %s\r\n", hexkey),
        ("  password: %s\n", "".join(r.choice(["correct", "horse", "battery", "staple", "lunar", "maple"])
                                     for _ in range(4))),
        ("PASS=%s\n", rs(r, ALNUM, 6)),
    ])
    return t % s, [s]


SPECIAL = ["other_context", "gcp_service_account", "azure_storage_key", "slack_webhook", "private_key", "url_password",
           "connection_string"]
ALL_KINDS = ANCHORED + SPECIAL + ["high_entropy"]


def wrap(s, width, brk):
    return brk.join(s[i:i + width] for i in range(0, len(s), width))


def encoded(r, plain):
    """plain (text) encoded as a tool prints it: (text, the encoded run)."""
    b = plain.encode()
    std = base64.b64encode(b).decode()
    form = r.randrange(8)
    if form == 0:
        return "b'%s'\n" % std, std
    if form == 1:
        return "echo %s | base64 -d\n" % std, std
    if form == 2:
        run = base64.encodebytes(b).decode().rstrip("\n")  # 76 a line
        return "$ base64 .env\n%s\n" % run, run
    if form == 3:
        run = wrap(std, 76, "\\n")
        return "{\"exit_code\": 0, \"stdout\": \"%s\\n\"}\n" % run, run
    if form == 4:
        run = wrap(b.hex(), 60, "\n")
        return "$ xxd -p config\n%s\n" % run, run
    if form == 5:
        run = base64.urlsafe_b64encode(b).decode().rstrip("=")
        return "GET /callback?state=%s HTTP/1.1\r\n" % run, run
    if form == 6:
        run = std[r.randrange(1, 4):]
        return "...%s\n" % run, run
    run = wrap(std, 64, "\r\n")
    return "Content-Transfer-Encoding: base64\r\n\r\n%s\r\n" % run, run


def true_items(seed=7, per_kind=50, with_encoded=True):
    r = random.Random(seed)
    items = []
    for kind in ALL_KINDS:
        n = per_kind * (4 if kind in ("password_assignment", "high_entropy", "url_password") else 1)
        for _ in range(n):
            if kind in SPECIAL:
                text, secrets = special(r, kind)
            else:
                t, s = in_context(r, kind)
                text, secrets = t.replace("%s", s, 1), [s]
            spans, at = [], 0
            for s in secrets:
                i = text.index(s, at)
                spans.append((i, len(s)))
                at = i + len(s)
            items.append((kind, text, spans))
    # toolgate's vendor formats, a family each (docs/REDACTION.md, "Vendor formats")
    r = random.Random(seed + 500)
    for family in sorted(vendors.VENDORS):
        for _ in range(per_kind // 5):
            text, s = vendors.vendor_item(r, family)
            items.append((family, text, [(text.index(s), len(s))]))
    # the same secrets encoded: the whole run is what must go
    r = random.Random(seed + 1000)
    for _ in range(per_kind if with_encoded else 0):
        kind = r.choice(ANCHORED + ["high_entropy", "url_password", "connection_string", "slack_webhook"])
        if kind in SPECIAL:
            plain = special(r, kind)[0]
        else:
            t, sec = in_context(r, kind)
            plain = t.replace("%s", sec, 1)
        text, run = encoded(r, plain)
        items.append(("encoded", text, [(text.index(run), len(run))]))
    return items


WORDS = ("the request was served from cache after the upstream returned a partial response and the "
         "scheduler retried the job on another worker while the queue drained slowly under load").split()


def lookalike_items(seed=11, per_kind=70, with_encoded=True):
    r = random.Random(seed)
    items = []

    def add(kind, text):
        items.append((kind, text))

    for _ in range(per_kind):
        sha = rs(r, HEX, 40)
        add("git_sha", r.choice(["commit %s\nAuthor: Ada <ada@example.org>\n" % sha,
                                 "%s refs/heads/main\n" % sha,
                                 "https://github.com/acme/infra/commit/%s\n" % sha,
                                 "Merge: %s %s\n" % (sha[:7], rs(r, HEX, 7)),
                                 "  resolved \"%s\"\n" % sha,
                                 "HEAD is now at %s fix: retry on 503\n" % sha[:12]]))
        d = hashlib.sha256(rs(r, ALNUM, 20).encode()).hexdigest()
        add("digest", r.choice(["%s  release-1.4.2.tar.gz\n" % d,
                                "image: registry.example.org/app@sha256:%s\n" % d,
                                "\"digest\": \"sha256:%s\",\n" % d,
                                "md5: %s\n" % hashlib.md5(d.encode()).hexdigest(),
                                "X-Amz-Content-Sha256: %s\r\n" % d,
                                "checksum = \"%s\"\n" % hashlib.sha1(d.encode()).hexdigest()]))
        u = str(uuid.UUID(int=r.getrandbits(128), version=4))
        add("uuid", r.choice(["request_id=%s status=200 duration_ms=%d\n" % (u, r.randrange(900)),
                              "  \"id\": \"%s\",\n" % u, "X-Request-ID: %s\r\n" % u,
                              "/api/v1/orders/%s/items\n" % u, "trace_id=%s span_id=%s\n" % (u.replace("-", ""), rs(r, HEX, 16))]))
        img = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(r.randrange(256) for _ in range(r.randrange(60, 300)))).decode()
        jpg = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(r.randrange(256) for _ in range(r.randrange(60, 300)))).decode()
        add("image_base64", r.choice(["<img src=\"data:image/png;base64,%s\">\n" % img,
                                      "  \"thumbnail\": \"%s\",\n" % jpg,
                                      "background: url(data:image/png;base64,%s);\n" % img,
                                      "  \"avatar\": \"%s\"\n" % img]))
        sentence = " ".join(r.choice(WORDS) for _ in range(r.randrange(6, 20)))
        enc = base64.b64encode(sentence.encode()).decode()
        add("text_base64", r.choice(["echo %s | base64 -d\n" % enc, "  config.yaml: %s\n" % enc,
                                     "Content-Transfer-Encoding: base64\n\n%s\n" % enc,
                                     "message=%s\n" % enc]))
        integ = base64.b64encode(hashlib.sha512(rs(r, ALNUM, 10).encode()).digest()).decode()
        add("integrity", r.choice(["      \"integrity\": \"sha512-%s\",\n" % integ,
                                   "  integrity sha512-%s\n" % integ,
                                   "<script src=\"x.js\" integrity=\"sha384-%s\"></script>\n" % base64.b64encode(hashlib.sha384(integ.encode()).digest()).decode(),
                                   "github.com/pkg/errors v0.9.1 h1:%s\n" % base64.b64encode(hashlib.sha256(integ.encode()).digest()).decode()]))
        add("placeholder", r.choice([
            "DB_PASSWORD=${DB_PASSWORD}\n", "password: <your-password>\n", "API_KEY=your-api-key-here\n",
            "password: changeme\n", "GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxxxxxx\n", "password=********\n",
            "token: {{ .Values.apiToken }}\n", "  \"password\": \"%(DB_PASS)s\",\n",
            "secret_key = os.environ[\"SECRET_KEY\"]\n", "password = getpass.getpass()\n",
            "export AWS_SECRET_ACCESS_KEY=$AWS_SECRET\n", "token: ${{ secrets.DEPLOY_TOKEN }}\n",
            "client_secret: REPLACE_ME\n", "password: \"\"\n", "api_key: null\n",
            "password=example-password\n", "token = settings.GITHUB_TOKEN\n",
            "const apiKey = process.env.STRIPE_KEY;\n", "password: dummy-password-123\n",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", "SECRET_KEY=<generate-with-openssl-rand>\n"]))
        add("aws_example", r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
                                     "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
                                     "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
                                     "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"]))
        add("url_no_password", r.choice([
            "https://github.com/acme/infra/pull/%d/files\n" % r.randrange(9999),
            "postgres://localhost:5432/orders\n", "git clone git@github.com:acme/infra.git\n",
            "https://user@example.org/path?page=%d&sort=desc\n" % r.randrange(99),
            "redis://cache:6379/0\n", "GET https://api.example.org/v1/items?limit=50&cursor=%d HTTP/1.1\n" % r.randrange(10**6),
            "amqp://rabbitmq:5672/%2F\n", "http://[::1]:8080/healthz\n",
            "mongodb://db1,db2,db3/?replicaSet=rs0&authSource=admin\n"]))
        add("identifier", r.choice([
            "at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.createBean(AbstractAutowireCapableBeanFactory.java:%d)\n" % r.randrange(999),
            "pod/web-%s-%s restarted\n" % (rs(r, HEX, 10), rs(r, "bcdfghjklmnpqrstvwxz2456789", 5)),
            "INFO  SimpleAsyncTaskExecutor_%d processed OrderFulfillmentRequestedEventHandlerV2\n" % r.randrange(99),
            "const useInfiniteScrollPaginationWithPrefetchV2 = createHook();\n",
            "__WEBPACK_IMPORTED_MODULE_%d_react_dom_client__\n" % r.randrange(99),
            "TestCheckoutService_ProcessPaymentWithExpiredCard_ReturnsDeclined2\n",
            "ip-10-0-%d-%d.us-west-2.compute.internal Ready\n" % (r.randrange(256), r.randrange(256)),
            "MAX_CONCURRENT_RECONCILES_PER_CONTROLLER=4\n"]))
        add("minified_js", r.choice([
            "!function(e,t){\"object\"==typeof exports&&\"undefined\"!=typeof module?module.exports=t():\"function\"==typeof define&&define.amd?define(t):(e=e||self).Vue=t()}(this,function(){\"use strict\";var e=Object.freeze({});\n",
            "var n=r(%d),o=r.n(n),a=function(e){return e&&e.__esModule?e:{default:e}};t.a=function(e){var t=e.children,n=e.className;return o.a.createElement(\"div\",{className:n},t)}\n" % r.randrange(999),
            "(window.webpackJsonp=window.webpackJsonp||[]).push([[%d],{\"2Vo4\":function(e,t,n){\"use strict\";n.d(t,\"a\",function(){return i})}}]);\n" % r.randrange(99)]))
        add("path", r.choice([
            "/usr/lib/x86_64-linux-gnu/libcrypto.so.3\n",
            "node_modules/@babel/plugin-transform-runtime/lib/get-runtime-path/index.js\n",
            "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\bin\n",
            "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~secret/default-token\n" % str(uuid.UUID(int=r.getrandbits(128))),
            "src/main/java/com/acme/orders/infrastructure/persistence/JpaOrderRepositoryAdapter.java\n",
            ".github/workflows/deploy-production.yml\n"]))
        add("public_key", r.choice([
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s ada@laptop\n" % rs(r, ALNUM + "+/", 43),
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ%s deploy\n" % rs(r, ALNUM + "+/", 300),
            "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n" % wrap64("MIID" + b64(r, 600)),
            "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n" % wrap64("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + b64(r, 48))]))
        add("keyword_not_secret", r.choice([
            "password_min_length: %d\n" % r.randrange(8, 20), "token_type: bearer\n",
            "  \"tokens\": %d,\n" % r.randrange(9999), "max_tokens=%d\n" % r.randrange(4096),
            "passwordField.setText(\"\");\n", "if password == confirm_password:\n",
            "password: str = Field(..., min_length=12)\n", "secretName: tls-secret\n",
            "token = request.headers.get(\"Authorization\")\n", "  secretKeyRef:\n    name: db-credentials\n    key: password\n",
            "\"next_page_token\": \"CiAKGjBpNDd2Nmp3Z3FqbmR4bXJ2ZG5wNTNxZzgQASgB\",\n",
            "Password reset email sent to ada@example.org\n", "bypass: true\n"]))
        add("random_id", r.choice([
            "x-amz-id-2: %s\r\n" % b64(r, 57), "  \"nonce\": \"%s\",\n" % b64(r, 18),
            "Content-Security-Policy: script-src 'nonce-%s'\r\n" % b64(r, 18),
            "<script src=\"/static/js/main.%s.chunk.js\"></script>\n" % rs(r, HEX, 8),
            "ETag: \"%s\"\r\n" % rs(r, HEX, 32),
            "  resourceVersion: \"%d\"\n" % r.randrange(10**8),
            "GET /oauth/callback?code_challenge=%s&code_challenge_method=S256 HTTP/1.1\n" % b64url(r, 32),
            "  \"ciphertext\": \"%s\"\n" % b64(r, 48),
            "checksum = \"%s\"\n" % rs(r, HEX, 64),
            "\"_resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\",\n",
        ]))
        add("log_line", "%s %s [%s] %s %d %dms\n" % (
            "2026-11-%02dT%02d:%02d:%02dZ" % (r.randrange(1, 29), r.randrange(24), r.randrange(60), r.randrange(60)),
            r.choice(["INFO", "WARN", "DEBUG"]), r.choice(["http-nio-8080-exec-3", "worker-7", "main"]),
            " ".join(r.choice(WORDS) for _ in range(8)), r.choice([200, 201, 404, 503]), r.randrange(2000)))
    # what looks like a vendor's credential: its format filled with a
    # placeholder, and the random-looking identifiers APIs hand out
    r = random.Random(seed + 500)
    for _ in range(per_kind * 6):
        add(*vendors.lookalike(r))
    # encoded text that holds no secret: prose, settings, placeholders and
    # AWS's documented example keys, as tools print them
    r = random.Random(seed + 1000)
    for _ in range(per_kind if with_encoded else 0):
        plain = r.choice([
            " ".join(r.choice(WORDS) for _ in range(r.randrange(4, 60))) + "\n",
            "LOG_LEVEL=info\nPORT=%d\nREGION=eu-west-1\nWORKERS=%d\n" % (r.randrange(1024, 65535), r.randrange(64)),
            "DB_PASSWORD=changeme\nAPI_TOKEN=${API_TOKEN}\nSECRET_KEY=<your-secret-key>\n",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "commit %s\nAuthor: Ada <ada@example.org>\n\n    fix: retry on 503\n" % rs(r, HEX, 40),
            "{\"id\": \"%s\", \"status\": \"shipped\", \"items\": %d}\n" % (uuid.UUID(int=r.getrandbits(128)), r.randrange(9)),
        ])
        add("encoded_text", encoded(r, plain)[0])
    return items


def filler(r, n):
    """Ordinary text and logs, n bytes or a little more."""
    out, size = [], 0
    while size < n:
        k = r.randrange(10)
        if k < 5:
            line = "2026-11-%02dT%02d:%02d:%02d.%03dZ %s [%s] %s status=%d duration_ms=%d\n" % (
                r.randrange(1, 29), r.randrange(24), r.randrange(60), r.randrange(60), r.randrange(1000),
                r.choice(["INFO", "WARN", "DEBUG", "ERROR"]), r.choice(["http-nio-8080-exec-3", "worker-7", "main"]),
                " ".join(r.choice(WORDS) for _ in range(r.randrange(5, 14))), r.choice([200, 201, 404, 503]),
                r.randrange(2000))
        elif k < 8:
            line = " ".join(r.choice(WORDS) for _ in range(r.randrange(8, 20))).capitalize() + ".\n"
        else:
            line = "  \"%s\": \"%s\",\n" % (r.choice(["name", "region", "status", "owner", "kind"]),
                                           " ".join(r.choice(WORDS) for _ in range(2)))
        out.append(line)
        size += len(line)
    return "".join(out)


def write(items, path, with_spans):
    """Items separated by a blank line; the spans file gives each item's
    place and its secrets' places in the file."""
    parts, meta, at = [], [], 0
    for it in items:
        kind, text = it[0], it[1]
        rec = {"kind": kind, "start": at, "length": len(text.encode())}
        if with_spans:
            rec["secrets"] = [[at + len(text[:s].encode()), len(text[s:s + n].encode())] for s, n in it[2]]
        meta.append(rec)
        parts.append(text + "\n")
        at += len(text.encode()) + 1
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(parts))
    with open(path + ".spans.json", "w") as f:
        json.dump(meta, f)


def bench(path, mb):
    """~mb MB: mostly ordinary text and logs, one true secret or look-alike
    every ~4 KB."""
    r = random.Random(3)
    # without the encoded kinds: the bench's file stays the one measured
    # before they were added
    trues, looks = true_items(seed=21, with_encoded=False), lookalike_items(seed=23, with_encoded=False)
    items = []
    total = 0
    while total < mb * 1000000:
        f = filler(r, r.randrange(2000, 6000))
        items.append(("filler", f, []))
        total += len(f)
        if r.randrange(2):
            it = r.choice(trues)
            items.append(it)
        else:
            it = r.choice(looks)
            items.append((it[0], it[1], []))
        total += len(it[1])
    write(items, path, True)


if __name__ == "__main__":
    what, out = sys.argv[1], sys.argv[2]
    if what == "true":
        write(true_items(), out, True)
    elif what == "lookalike":
        write(lookalike_items(), out, False)
    elif what == "bench":
        bench(out, float(sys.argv[3]) if len(sys.argv) > 3 else 50)
    else:
        sys.exit("usage: corpus.py true|lookalike|bench OUT [MB]")
