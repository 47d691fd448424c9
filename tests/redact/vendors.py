"""Vendor credential formats for the redactor's corpora (tests/redact/corpus.py,
docs/REDACTION.md, "Vendor formats"): one generator a family, each making a
credential in the shape its vendor documents (prefix, alphabet, length,
structure), random in the rest, so that no real credential is committed;
and what looks like them and is not: the same shapes filled with
placeholders as documentation writes them, and the random-looking
identifiers APIs hand out (object ids, request ids, resource ids).

VENDORS: family -> generator(r) -> credential. lookalike(r) -> text.
"""
import base64
import json
import string

ALNUM = string.ascii_letters + string.digits
LOWER_NUM = string.ascii_lowercase + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def rs(r, alphabet, n):
    return "".join(r.choice(alphabet) for _ in range(n))


def uuid4(r):
    h = rs(r, HEX, 32)
    return "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], r.choice("89ab"), h[17:20], h[20:32])


def b64(r, n, alphabet=ALNUM + "+/"):
    return rs(r, alphabet, n)


def b64json(obj):
    return base64.b64encode(json.dumps(obj).encode()).decode().rstrip("=")


VENDORS = {
    "digitalocean_token": lambda r: r.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + rs(r, HEX, 64),
    "alibaba_access_key_id": lambda r: "LTAI" + rs(r, ALNUM, r.choice([12, 16, 20])),
    "tencent_secret_id": lambda r: "AKID" + rs(r, ALNUM, 32),
    "google_oauth_client_secret": lambda r: "GOCSPX-" + rs(r, B64URL, 28),
    "google_oauth_token": lambda r: r.choice(["ya29.a0" + rs(r, B64URL, 150), "1//0" + rs(r, B64URL, 98)]),
    "azure_ad_client_secret": lambda r: rs(r, ALNUM, 3) + r.choice("0123456789") + "Q~" + rs(r, ALNUM + "_~.-", 34),
    "signed_url_signature": lambda r: r.choice([rs(r, HEX, 64), rs(r, ALNUM, 43) + "%3D"]),
    "aws_session_token": lambda r: r.choice(["IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"]) + rs(r, ALNUM + "+/", 300),
    "aws_bedrock_key": lambda r: "ABSK" + rs(r, ALNUM + "+/", 128),
    "heroku_key": lambda r: "HRKU-AA" + rs(r, B64URL, 58),
    "flyio_token": lambda r: r.choice(["fo1_" + rs(r, B64URL, 43), "FlyV1 fm2_" + rs(r, ALNUM + "+/", 200)]),
    "netlify_token": lambda r: "nfp_" + rs(r, ALNUM, 36),
    "render_key": lambda r: "rnd_" + rs(r, ALNUM, 32),
    "supabase_key": lambda r: r.choice(["sbp_" + rs(r, HEX, 40), "sb_secret_" + rs(r, B64URL, 31)]),
    "neon_key": lambda r: "napi_" + rs(r, LOWER_NUM, 64),
    "planetscale_token": lambda r: "pscale_" + r.choice(["tkn_", "pw_", "oauth_"]) + rs(r, B64URL, 43),
    "pulumi_token": lambda r: "pul-" + rs(r, HEX, 40),
    "terraform_cloud_token": lambda r: rs(r, ALNUM, 14) + ".atlasv1." + rs(r, B64URL, 67),
    "vault_token": lambda r: r.choice(["hvs.", "hvb.", "hvr."]) + rs(r, B64URL, r.choice([24, 90])),
    "doppler_token": lambda r: "dp." + r.choice(["pt", "st", "ct", "sa", "scim", "audit"]) + "." + rs(r, ALNUM, 43),
    "docker_hub_token": lambda r: r.choice(["dckr_pat_", "dckr_oat_"]) + rs(r, B64URL, 27),
    "onepassword_token": lambda r: "ops_eyJ" + rs(r, ALNUM + "+/", 300),
    "age_secret_key": lambda r: "AGE-SECRET-KEY-1" + rs(r, BECH32, 58).upper(),
    "tailscale_key": lambda r: "tskey-" + r.choice(["auth", "api", "client"]) + "-" + rs(r, ALNUM, 11) + "CNTRL-" + rs(r, ALNUM, 32),
    "cloudflare_origin_ca_key": lambda r: "v1.0-" + rs(r, HEX, 24) + "-" + rs(r, HEX, 146),
    "databricks_token": lambda r: "dapi" + rs(r, HEX, 32) + r.choice(["", "-2"]),
    "openshift_token": lambda r: "sha256~" + rs(r, B64URL, 43),
    "grafana_token": lambda r: r.choice(["glc_" + b64json({"o": str(r.randrange(10**6)), "n": "stack-" + rs(r, LOWER_NUM, 6), "k": rs(r, ALNUM, 24), "m": {"r": "prod-us-east-0"}}),
                                         "glsa_" + rs(r, ALNUM, 32) + "_" + rs(r, HEX, 8),
                                         "eyJrIjoi" + rs(r, ALNUM, 60) + "In0="]),
    "new_relic_key": lambda r: r.choice(["NRAK-", "NRII-", "NRJS-"]) + rs(r, UPPER_NUM, 27),
    "dynatrace_token": lambda r: "dt0c01." + rs(r, UPPER_NUM, 24) + "." + rs(r, UPPER_NUM, 64),
    "sentry_token": lambda r: r.choice(["sntrys_" + b64json({"iat": 1.7e9, "url": "https://sentry.io", "org": "acme"}) + "_" + rs(r, ALNUM, 43),
                                        "sntryu_" + rs(r, HEX, 64)]),
    "buildkite_token": lambda r: "bkua_" + rs(r, HEX, 40),
    "circleci_token": lambda r: "CCIPAT_" + rs(r, ALNUM, 22) + "_" + rs(r, HEX, 40),
    "sonarqube_token": lambda r: r.choice(["sqp_", "squ_", "sqa_"]) + rs(r, HEX, 40),
    "atlassian_token": lambda r: r.choice(["ATATT3xFfGF0" + rs(r, B64URL, 170) + "=" + rs(r, HEX, 8), "ATBB" + rs(r, ALNUM, 32)]),
    "jfrog_token": lambda r: r.choice(["AKCp" + rs(r, ALNUM, 69), "cmVmdGtuOjAxOj" + rs(r, ALNUM, 50)]),
    "nuget_key": lambda r: "oy2" + rs(r, LOWER_NUM, 43),
    "rubygems_key": lambda r: "rubygems_" + rs(r, HEX, 48),
    "crates_io_token": lambda r: "cio" + rs(r, ALNUM, 32),
    "clojars_token": lambda r: "CLOJARS_" + rs(r, LOWER_NUM, 60),
    "huggingface_token": lambda r: r.choice(["hf_", "api_org_"]) + rs(r, string.ascii_letters, 34),
    "replicate_token": lambda r: "r8_" + rs(r, ALNUM, 37),
    "perplexity_key": lambda r: "pplx-" + rs(r, ALNUM, 48),
    "groq_key": lambda r: "gsk_" + rs(r, ALNUM, 52),
    "xai_key": lambda r: "xai-" + rs(r, ALNUM, 80),
    "openrouter_key": lambda r: "sk-or-v1-" + rs(r, HEX, 64),
    "langsmith_key": lambda r: "lsv2_" + r.choice(["pt_", "sk_"]) + rs(r, HEX, 32) + "_" + rs(r, HEX, 10),
    "langfuse_key": lambda r: "sk-lf-" + uuid4(r),
    "pinecone_key": lambda r: "pcsk_" + rs(r, ALNUM, 6) + "_" + rs(r, ALNUM, 63),
    "nvidia_key": lambda r: "nvapi-" + rs(r, B64URL, 64),
    "shopify_token": lambda r: r.choice(["shpat_", "shpca_", "shppa_", "shpss_"]) + rs(r, HEX, 32),
    "square_token": lambda r: r.choice(["EAAA" + rs(r, B64URL, 60), "sq0atp-" + rs(r, B64URL, 22), "sq0csp-" + rs(r, B64URL, 43)]),
    "braintree_token": lambda r: "access_token$production$" + rs(r, LOWER_NUM, 16) + "$" + rs(r, HEX, 32),
    "stripe_webhook_secret": lambda r: "whsec_" + rs(r, ALNUM, 32),
    "paddle_key": lambda r: r.choice(["pdl_live_", "pdl_sdbx_"]) + "apikey_" + rs(r, LOWER_NUM, 26) + "_" + rs(r, ALNUM, 22) + "_" + rs(r, ALNUM, 3),
    "plaid_token": lambda r: r.choice(["access-sandbox-", "access-production-"]) + uuid4(r),
    "easypost_key": lambda r: r.choice(["EZAK", "EZTK"]) + rs(r, ALNUM, 54),
    "shippo_token": lambda r: r.choice(["shippo_live_", "shippo_test_"]) + rs(r, HEX, 40),
    "flutterwave_key": lambda r: r.choice(["FLWSECK-", "FLWSECK_TEST-"]) + rs(r, HEX, 32) + "-X",
    "mailgun_key": lambda r: "key-" + rs(r, HEX, 32),
    "mailchimp_key": lambda r: rs(r, HEX, 32) + "-us" + str(r.randrange(1, 21)),
    "brevo_key": lambda r: r.choice(["xkeysib-", "xsmtpsib-"]) + rs(r, HEX, 64) + "-" + rs(r, ALNUM, 16),
    "telegram_bot_token": lambda r: str(r.randrange(10**8, 10**10)) + ":AA" + rs(r, B64URL, 33),
    "discord_webhook": lambda r: rs(r, B64URL, 68),
    "teams_webhook": lambda r: uuid4(r) + "@" + uuid4(r) + "/IncomingWebhook/" + rs(r, HEX, 32) + "/" + uuid4(r),
    "twitter_bearer_token": lambda r: "AAAAAAAAAAAAAAAAAAAAA" + rs(r, ALNUM, 25) + "%3D" + rs(r, ALNUM, 50),
    "facebook_token": lambda r: "EAA" + r.choice("BCDGIJ") + rs(r, ALNUM, 180),
    "instagram_token": lambda r: "IGQV" + rs(r, B64URL, 180),
    "mapbox_secret_token": lambda r: "sk.eyJ1Ijoi" + rs(r, B64URL, 60) + "." + rs(r, B64URL, 22),
    "dropbox_token": lambda r: "sl." + rs(r, B64URL, 138),
    "linear_key": lambda r: r.choice(["lin_api_", "lin_oauth_"]) + rs(r, ALNUM, 40),
    "notion_token": lambda r: r.choice(["ntn_" + rs(r, ALNUM, 46), "secret_" + rs(r, ALNUM, 43)]),
    "figma_token": lambda r: "figd_" + rs(r, B64URL, 40),
    "airtable_token": lambda r: "pat" + rs(r, ALNUM, 14) + "." + rs(r, HEX, 64),
    "clickup_token": lambda r: "pk_" + str(r.randrange(10**7, 10**9)) + "_" + rs(r, UPPER_NUM, 32),
    "postman_key": lambda r: "PMAK-" + rs(r, HEX, 24) + "-" + rs(r, HEX, 34),
    "contentful_token": lambda r: "CFPAT-" + rs(r, B64URL, 43),
    "typeform_token": lambda r: "tfp_" + rs(r, ALNUM, 44) + "_" + rs(r, ALNUM, 14),
    "hubspot_token": lambda r: r.choice(["pat-na1-", "pat-eu1-"]) + uuid4(r),
    "posthog_key": lambda r: "phx_" + rs(r, ALNUM, 43),
    "launchdarkly_key": lambda r: r.choice(["api-", "sdk-"]) + uuid4(r),
    "statsig_key": lambda r: "secret-" + rs(r, ALNUM, 43),
    "pubnub_secret_key": lambda r: "sec-c-" + rs(r, ALNUM, 48),
    "firebase_server_key": lambda r: "AAAA" + rs(r, B64URL, 7) + ":APA91b" + rs(r, B64URL, 134),
    "octopus_key": lambda r: "API-" + rs(r, UPPER_NUM, 30),
    "harness_token": lambda r: "pat." + rs(r, B64URL, 22) + "." + rs(r, HEX, 24) + "." + rs(r, ALNUM, 20),
    "prefect_key": lambda r: "pnu_" + rs(r, ALNUM, 36),
    "infracost_key": lambda r: "ico-" + rs(r, ALNUM, 32),
    "scalingo_token": lambda r: "tk-us-" + rs(r, B64URL, 48),
    "settlemint_token": lambda r: r.choice(["sm_pat_", "sm_aat_"]) + rs(r, ALNUM, 16),
    "yandex_key": lambda r: "AQVN" + rs(r, B64URL, 36),
    "lob_key": lambda r: r.choice(["live_", "test_"]) + rs(r, HEX, 35),
    "gocardless_token": lambda r: "live_" + rs(r, ALNUM, 40),
    "duffel_token": lambda r: r.choice(["duffel_test_", "duffel_live_"]) + rs(r, B64URL, 43),
    "frameio_token": lambda r: "fio-u-" + rs(r, B64URL, 64),
    "adobe_secret": lambda r: "p8e-" + rs(r, ALNUM, 32),
    "paseto_token": lambda r: r.choice(["v2.local.", "v4.local.", "v4.public."]) + rs(r, B64URL, 120),
    "discord_bot_token": lambda r: r.choice("MNO") + rs(r, B64URL, 23) + "." + rs(r, B64URL, 6) + "." + rs(r, B64URL, 38),
    "putty_private_key": lambda r: ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ada@laptop\n"
                                    "Public-Lines: 2\n" + rs(r, ALNUM + "+/", 64) + "\n" + rs(r, ALNUM + "+/", 20) +
                                    "\nPrivate-Lines: 1\n" + rs(r, ALNUM + "+/", 44) + "\nPrivate-MAC: " + rs(r, HEX, 64)),
    "openvpn_static_key": lambda r: ("-----BEGIN OpenVPN Static key V1-----\n" +
                                     "\n".join(rs(r, HEX, 32) for _ in range(16)) +
                                     "\n-----END OpenVPN Static key V1-----"),
}

# Where a vendor's credential is not a bare token: the text around it.
AROUND = {
    "signed_url_signature": lambda r, s: r.choice([
        "https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig=%s\n",
        "https://s3.amazonaws.com/acme/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261201T000000Z&X-Amz-Expires=3600&X-Amz-Signature=%s\n"]),
    "discord_webhook": lambda r, s: "https://discord.com/api/webhooks/%d/%%s\n" % r.randrange(10**17, 10**19),
    "teams_webhook": lambda r, s: "https://acme.webhook.office.com/webhookb2/%s\n",
    "braintree_token": lambda r, s: "BRAINTREE_ACCESS_TOKEN=%s\n",
}

CONTEXTS = [
    "{s}\n",
    "export {name}={s}\n",
    "{name}=\"{s}\"\n",
    "  {name}: {s}\n",
    "  \"{name}\": \"{s}\",\n",
    "$ mycli login --with-token {s}\n",
    "2026-11-30T10:00:00Z INFO client configured with {s}\n",
    "curl -H \"Authorization: Bearer {s}\" https://api.example.org/v1/me\n",
    "client = Client(api_key=\"{s}\")\n",
    "Traceback (most recent call last):\n  File \"sync.py\", line 9, in <module>\n    connect(\"{s}\")\nPermissionError: 403\n",
    "  512  deploy --auth {s} --env prod\n",
    "[vendor]\nkey = {s}\n",
]


def vendor_item(r, family):
    """(text, secret) of one credential of family in a place it turns up."""
    s = VENDORS[family](r)
    if family in AROUND:
        return AROUND[family](r, s).replace("%s", s, 1), s
    t = r.choice(CONTEXTS).replace("{name}", r.choice(["API_KEY", "TOKEN", "VENDOR_KEY", "ACCESS", "CLIENT"]))
    return t.replace("{s}", s, 1), s


def lookalike(r):
    """(kind, text) that must not be flagged."""
    kind = r.choice(["vendor_placeholder", "object_id", "resource_id"])
    if kind == "vendor_placeholder":
        fam = r.choice(sorted(VENDORS))
        s = VENDORS[fam](r)
        # the documentation's way of showing the format
        for pre in ("dop_v1_", "hf_", "sk-or-v1-", "pul-", "glsa_", "nfp_", "rnd_", "ghp_", "gsk_",
                    "xai-", "pplx-", "r8_", "lin_api_", "ntn_", "figd_", "PMAK-", "CFPAT-", "phx_",
                    "dapi", "AKCp", "key-", "bkua_", "sqp_", "whsec_", "EZAK", "tskey-auth-"):
            if s.startswith(pre):
                rest = len(s) - len(pre)
                filler = r.choice(["x" * rest, "X" * rest, "0" * rest, ("your_token_here" * 20)[:rest],
                                   ("EXAMPLE" * 30)[:rest], "<" + ("your-key" * 20)[:max(rest - 2, 1)] + ">",
                                   ("...." * 40)[:rest]])
                return kind, r.choice(["export TOKEN=%s\n", "  api_key: \"%s\"\n", "# e.g. %s\n",
                                       "Set VENDOR_KEY to a value like %s\n"]) % (pre + filler)
        return kind, "VENDOR_KEY=${VENDOR_KEY}\n"
    if kind == "object_id":
        return kind, r.choice([
            "charge ch_%s succeeded\n" % rs(r, ALNUM, 24),
            "customer=cus_%s plan=pro\n" % rs(r, ALNUM, 14),
            "payment_intent: pi_%s\n" % rs(r, ALNUM, 24),
            "\"id\": \"evt_%s\",\n" % rs(r, ALNUM, 24),
            "\"id\": \"chatcmpl-%s\",\n" % rs(r, ALNUM, 29),
            "request-id: req_%s\r\n" % rs(r, ALNUM, 24),
            "\"id\": \"msg_%s\", \"type\": \"message\"\n" % rs(r, ALNUM, 24),
            "tool_use_id=toolu_%s\n" % rs(r, ALNUM, 24),
            "\"file_id\": \"file-%s\"\n" % rs(r, ALNUM, 24),
            "thread_%s run_%s\n" % (rs(r, ALNUM, 24), rs(r, ALNUM, 24)),
            "ulid=%s\n" % rs(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26),
            "nanoid %s\n" % rs(r, B64URL, 21),
            "_id: ObjectId(\"%s\")\n" % rs(r, HEX, 24),
            "container %s started\n" % rs(r, HEX, 64),
            "sub_%s in_%s\n" % (rs(r, ALNUM, 24), rs(r, ALNUM, 24)),
        ])
    return kind, r.choice([
        "instance i-%s in subnet-%s (vpc-%s)\n" % (rs(r, HEX, 17), rs(r, HEX, 17), rs(r, HEX, 17)),
        "arn:aws:iam::%d:role/deploy-%s\n" % (r.randrange(10**11, 10**12), rs(r, LOWER_NUM, 8)),
        "ami-%s sg-%s\n" % (rs(r, HEX, 17), rs(r, HEX, 17)),
        "/subscriptions/%s/resourceGroups/prod/providers/Microsoft.Web/sites/api\n" % uuid4(r),
        "projects/%d/locations/us-central1/functions/sync\n" % r.randrange(10**11, 10**12),
        "pod web-%s-%s\n" % (rs(r, "bcdfghjklmnpqrstvwxz2456789", 10), rs(r, "bcdfghjklmnpqrstvwxz2456789", 5)),
        "traceparent: 00-%s-%s-01\r\n" % (rs(r, HEX, 32), rs(r, HEX, 16)),
        "ocid1.instance.oc1.iad.%s\n" % rs(r, LOWER_NUM, 60),
        "cf-ray: %s-IAD\r\n" % rs(r, HEX, 16),
        "x-request-id: %s\r\n" % rs(r, ALNUM, 32),
    ])
