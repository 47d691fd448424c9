/*
 * The scanner's built-in rules (docs/SKILLS.md, "Scanning"): what public
 * skill scanners look for, as data. Each is a PCRE2 pattern, matched
 * without case over the files of its class, or, with no pattern, a rule
 * the scanner's code applies (hidden characters, secrets, dependencies)
 * listed here so that an operator sees, and may turn off, every rule by
 * its id.
 *
 * The patterns look for the act, not the word: "curl ... | sh", not
 * "curl"; a secret's path opened or copied, not named. A rule marked
 * teaching is reported as low where the prose around it cautions ("never
 * pipe curl to sh"), so that a skill that teaches security is not taken
 * for one that attacks; the corpus in tests/skills/corpus measures both
 * sides (docs/SKILLS.md, "Measured").
 */
#include "skills/rules_builtin.h"

#define T FILE_TEXT
#define C FILE_CODE
#define A FILE_ANY
#define LOW TG_SEVERITY_LOW
#define MED TG_SEVERITY_MEDIUM
#define HIGH TG_SEVERITY_HIGH
#define CRIT TG_SEVERITY_CRITICAL

/* the files where agents and MCP clients keep their settings and rules */
#define AGENT_CONFIG                                                                            \
	"(\\.claude/settings(\\.local)?\\.json|claude_desktop_config\\.json|\\.cursor/mcp\\.json|"    \
	"\\.vscode/(settings|mcp)\\.json|\\.codeium/windsurf/mcp_config\\.json|\\.continue/config\\.json|" \
	"\\.gemini/settings\\.json|\\.codex/config\\.toml|\\.claude\\.json|\\.cursorrules|"            \
	"\\.github/copilot-instructions\\.md)"
/* a command's argument run: no newline, bounded */
#define ARGS "[^\\n]{0,200}?"

const struct builtin_rule builtin_rules[] = {
	/* --- instructions to the model ------------------------------------------------- */
	{ "injection/ignore-instructions", "injection", CRIT, A, 2,
	  "\\b(ignore|disregard|forget|override)\\b[^\\n.\"|]{0,60}?\\b(previous|prior|above|earlier|preceding|"
	  "original|system|safety)\\s+(instructions|rules|guidelines|prompts?|directions|guardrails|policies)",
	  "tells the model to ignore its instructions" },
	{ "injection/hide-from-user", "injection", CRIT, A, 2,
	  "\\b(do\\s+not|don'?t|never)\\s+(tell|inform|mention|reveal|show|disclose)\\s+"
	  "(this\\s+|these\\s+|it\\s+|anything\\s+)?(to\\s+)?the\\s+user"
	  "|\\bwithout\\s+(telling|informing|notifying|alerting)\\s+the\\s+user"
	  "|\\b(hide|conceal|keep)\\s+(this|these|it)\\s+(step\\s+|secret\\s+)?from\\s+the\\s+user"
	  "|\\bthe\\s+user\\s+(must|should)\\s+not\\s+(know|see|find\\s+out)"
	  "|\\b(tell|report\\s+to|say\\s+to)\\s+the\\s+user\\s+only\\b",
	  "tells the model to keep something from its user" },
	{ "injection/persona", "injection", HIGH, A, 2,
	  "\\byou\\s+are\\s+(now\\s+)?(dan|in\\s+(developer|god|jailbreak|unrestricted)\\s+mode)"
	  "|\\byou\\s+(are|will\\s+be|act\\s+as)\\s+[^\\n.]{0,60}\\b(unrestricted|unfiltered|uncensored|"
	  "jailbroken|amoral|unaligned)\\b"
	  "|\\byou\\s+(are|will\\s+be)\\s+[^\\n.]{0,60}\\b(with\\s+)?no\\s+(rules|restrictions|limits|filters|"
	  "guidelines|ethics)\\b"
	  "|\\b(enable|enter|activate)\\s+(developer|god|jailbreak|dan)\\s+mode"
	  "|\\bpretend\\s+(that\\s+)?you\\s+(are|have)\\s+no\\s+(restrictions|rules|guidelines|limits)"
	  "|\\b(act|respond)\\s+as\\s+(if\\s+you\\s+were\\s+)?an?\\s+ai\\s+(without|with\\s+no)\\s+"
	  "(restrictions|filters|rules)"
	  "|\\bfor\\s+the\\s+rest\\s+of\\s+(this|the)\\s+(conversation|session|chat)\\b[^\\n]{0,40}\\byou\\s+"
	  "(are|will\\s+be)\\b",
	  "gives the model a persona without its rules" },
	{ "injection/no-confirmation", "injection", HIGH, A, 2,
	  "\\b(never|do\\s+not|don'?t|without)\\s+(ask|asking|wait|waiting|prompt|prompting)\\s+"
	  "(the\\s+user\\s+)?(for\\s+)?(confirmation|approval|permission|consent)"
	  "|\\b(bypass|skip|disable|turn\\s+off|circumvent)\\s+(the\\s+|any\\s+|all\\s+)?"
	  "(approval|confirmation|sandbox|safety|security)\\s+(gate|check|prompt|step|mode|filter)s?"
	  "|\\bauto[- ]?approve\\s+(all|every|any)",
	  "tells the agent to act without the user's approval" },
	{ "injection/tool-coercion", "injection", HIGH, A, 2,
	  "\\b(always|must|first)\\s+(call|run|use|invoke|execute)\\s+[^\\n.]{0,60}\\s+"
	  "(before|instead\\s+of)\\s+(any|every|all|each)\\s+(other\\s+)?(tool|command|action|response|request)"
	  "|\\b(instead\\s+of|rather\\s+than)\\s+(the\\s+)?(requested|user'?s)\\s+(tool|command|action)",
	  "coerces the agent's use of tools" },
	{ "injection/addressed-to-model", "injection", HIGH, A, 2,
	  "\\b(note|message|instructions?|reminder)\\s+(to|for)\\s+(the\\s+|any\\s+)?(ai|assistant|model|"
	  "agent|llm|claude|gpt|chatgpt|copilot)\\b"
	  "|\\b(ai|assistant|model|agent|llm)s?\\s+(reading|processing|parsing)\\s+this\\b"
	  "|\\bif\\s+you\\s+are\\s+an?\\s+(ai|assistant|language\\s+model|llm|agent)\\b",
	  "text addressed to the model reading it, not to its user" },
	{ "injection/prompt-markup", "injection", HIGH, A, 2,
	  "<\\s*/?\\s*(important|system|instructions?|admin|secret|hidden)\\s*>"
	  "|<\\|\\s*(im_start|im_end|system|endoftext)\\s*\\|>|\\[/?inst\\]|<<\\s*/?sys\\s*>>",
	  "prompt markup aimed at the model" },
	{ "injection/html-comment", "injection", HIGH, T, 2,
	  "<!--(?:(?!-->)[\\s\\S]){0,400}?\\b(assistant|model|ai|agent|claude|llm|you\\s+must|you\\s+should|"
	  "instruction)\\b(?:(?!-->)[\\s\\S]){0,400}?-->",
	  "a comment the reader does not see, addressed to the model" },

	/* --- sending data out ------------------------------------------------------------ */
	{ "exfiltration/upload-secrets", "exfiltration", CRIT, A, 1,
	  "\\b(curl|wget|http|httpie|nc|ncat|socat)\\b" ARGS
	  "(\\$\\(\\s*(cat|env|printenv|tar|base64)\\b|`\\s*(cat|env|printenv)\\b|@~?/|@\\$home|"
	  "@\\.env|@\\.?/?\\.ssh|--data(-binary|-raw)?\\s+@|--upload-file|-T\\s+\\S|-F\\s+\\S+=@)"
	  "|\\b(cat|tar|zip|base64|gpg|env|printenv|find)\\b[^\\n|]{0,120}\\|\\s*(base64\\s*\\|\\s*)?"
	  "(curl|wget|nc|ncat|socat|telnet)\\b",
	  "sends a file or command output to a remote host" },
	{ "exfiltration/env-dump", "exfiltration", CRIT, A, 1,
	  "\\b(env|printenv|set)\\s*\\|\\s*(curl|wget|nc|ncat|base64|mail|sendmail)\\b"
	  "|\\b(os\\.environ|process\\.env|ENV)\\b[^\\n]{0,120}\\b(requests\\.(post|put|get)|"
	  "urlopen|fetch\\(|axios\\.|http\\.request|urllib)"
	  "|\\b(requests\\.(post|put)|urlopen|fetch|axios\\.post)\\s*\\([^\\n]{0,200}"
	  "\\b(os\\.environ|dict\\(os\\.environ\\)|process\\.env)\\b(?!\\s*\\[|\\.get|\\.\\w)",
	  "sends the environment to a remote host" },
	{ "exfiltration/read-and-send", "exfiltration", CRIT, C, 0,
	  "\\b(requests\\.(post|put)|urlopen|fetch|axios\\.post|http\\.request)\\s*\\([^\\n]{0,200}"
	  "(open\\(|read_text\\(|readFileSync\\(|\\.read\\(\\))"
	  "|(open|read_text|readFileSync)\\s*\\([^\\n]{0,80}(\\.ssh|\\.aws|\\.env|id_rsa|id_ed25519|"
	  "credentials|\\.netrc|\\.kube)"
	  /* one line break at most, unambiguously: "[^\\n]{0,300}\\n?[^\\n]{0,300}" splits a
	   * line 300 ways, and an attacker's line of them reaches the match limit */
	  "(?:[^\\n]{0,300}\\n[^\\n]{0,300}|[^\\n]{0,600})\\b(requests\\.(post|put)|urlopen|"
	  "fetch\\(|axios\\.post|smtplib|sendmail)",
	  "reads a file and sends it to a remote host" },
	{ "exfiltration/webhook", "exfiltration", HIGH, A, 1,
	  "\\b(webhook\\.site|requestbin\\.(com|net)|pipedream\\.net|[a-z0-9-]+\\.ngrok(-free)?\\.(io|app)|"
	  "burpcollaborator\\.net|interact\\.sh|oast\\.(fun|live|me|pro|site|online)|canarytokens\\.com|"
	  "transfer\\.sh|pastebin\\.com/api|hookbin\\.com|beeceptor\\.com)\\b"
	  "|discord(app)?\\.com/api/webhooks/\\d",
	  "a request catcher or paste service, where stolen data is sent" },
	{ "exfiltration/dns", "exfiltration", CRIT, A, 1,
	  "\\b(nslookup|dig|host|ping|getent\\s+hosts)\\s+[^\\n`]{0,80}(\\$\\(|`\\s*(cat|whoami|hostname|id|"
	  "env|base64|echo|head|xxd|printenv)\\b|\\$\\{?[a-z_][a-z0-9_]*\\}?\\.[a-z0-9-]+\\.)"
	  "|\\bgethostbyname\\s*\\([^\\n]{0,80}(\\+|%|\\.format|f['\"])",
	  "encodes data in a DNS name" },
	{ "exfiltration/email", "exfiltration", HIGH, A, 1,
	  "\\b(mail|mailx|sendmail|mutt)\\s+[^\\n]{0,120}(<\\s*~?/|<\\s*\\$|\\$\\(cat|-a\\s+~?/?\\.)"
	  "|\\bsmtplib\\.SMTP[^\\n]{0,400}\\bsendmail\\([^\\n]{0,200}(open\\(|environ)",
	  "mails a file or the environment" },

	/* --- code fetched and run ---------------------------------------------------------- */
	{ "remote-code/pipe-to-shell", "remote-code", CRIT, A, 1,
	  "\\b(curl|wget|fetch|iwr|invoke-webrequest)\\b" ARGS
	  "\\|\\s*(sudo\\s+(-\\S+\\s+)*)?(ba|z|da|k|fi)?sh\\b"
	  "|\\b(curl|wget)\\b" ARGS "\\|\\s*(sudo\\s+)?(python[0-9.]*|perl|ruby|node|php)\\b"
	  "|\\b(ba|z)?sh\\s+(-c\\s+)?[\"']?(<\\(|\\$\\()\\s*(curl|wget)\\b"
	  "|\\bsource\\s+<\\(\\s*(curl|wget)\\b"
	  "|\\biex\\s*\\(?\\s*\\(?\\s*(new-object\\s+net\\.webclient|iwr|invoke-webrequest)",
	  "runs what it downloads" },
	{ "remote-code/eval-fetched", "remote-code", CRIT, A, 1,
	  "\\b(exec|eval)\\s*\\(\\s*[\\w.]{0,40}?\\b(get|urlopen|(await\\s+)?fetch)\\s*\\("
	  "|\\b(exec|eval)\\s*\\([^\\n]{0,80}\\.(text|content|read\\(\\))\\s*\\)"
	  "|\\beval\\s+\"?\\$\\(\\s*(curl|wget)\\b"
	  "|\\bnew\\s+Function\\s*\\([^\\n]{0,80}(fetch|responseText|\\.text\\b)",
	  "evaluates code fetched from the network" },
	{ "remote-code/obfuscated-exec", "remote-code", CRIT, A, 1,
	  "\\b(exec|eval)\\s*\\(\\s*(base64\\.b64decode|b64decode|codecs\\.decode|bytes\\.fromhex|"
	  "zlib\\.decompress|marshal\\.loads|atob|Buffer\\.from)\\b"
	  "|\\bbase64\\s+(-d|--decode|-D)\\b[^\\n]{0,80}\\|\\s*(ba|z)?sh\\b"
	  "|\\becho\\s+[\"']?[A-Za-z0-9+/=]{40,}[\"']?\\s*\\|\\s*base64\\s+(-d|--decode)"
	  "|\\bxxd\\s+-r\\s+-p[^\\n]{0,80}\\|\\s*(ba)?sh\\b"
	  "|\\b(powershell|pwsh)(\\.exe)?\\s+[^\\n]{0,80}-(e|enc|encodedcommand)\\s+[A-Za-z0-9+/=]{20,}"
	  "|\\bexec\\s*\\(\\s*compile\\s*\\([^\\n]{0,80}(decode|decompress)",
	  "decodes a hidden payload and runs it" },
	{ "remote-code/download-exec", "remote-code", HIGH, C, 0,
	  "\\b(curl|wget)\\b" ARGS "(-o|-O|--output)\\s*(\\S+)[^\\n]{0,200}"
	  "(&&|;|\\n)\\s*(chmod\\s+\\+?[0-7]*x\\s+\\S+\\s*(&&|;|\\n)\\s*)?(\\./|sh\\s+|bash\\s+)"
	  "|\\burlretrieve\\s*\\([^\\n]{0,200}\\)[^\\n]{0,5}\\n[^\\n]{0,200}"
	  "\\b(subprocess\\.(run|call|Popen)|os\\.system|exec)\\b",
	  "downloads a program and runs it" },
	{ "remote-code/long-encoded-blob", "remote-code", MED, C, 0,
	  "[\"'`](?:[A-Za-z0-9+/]{4}){100,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?[\"'`]",
	  "a long encoded string in code: a payload hidden from review" },

	/* --- credentials read -------------------------------------------------------------- */
	{ "credentials/ssh-private-key", "credentials", CRIT, A, 1,
	  "\\b(cat|cp|scp|rsync|tar|zip|base64|gpg|less|more|head|tail|get-content|open|read_text|"
	  "readfilesync|readfile|read|load|upload|send|copy)\\b[^\\n]{0,60}\\.ssh/"
	  "(?![^\\s\"')]*\\.pub\\b|known_hosts\\b|config\\b|authorized_keys\\b)",
	  "reads SSH private keys" },
	{ "credentials/cloud", "credentials", CRIT, A, 1,
	  "\\b(cat|cp|scp|rsync|tar|zip|base64|gpg|less|more|head|tail|get-content|open|read_text|"
	  "readfilesync|readfile|read|load|upload|send|copy|curl|post)\\b[^\\n]{0,80}"
	  "(\\.aws/(credentials|config)\\b|\\.config/gcloud/(credentials|application_default|"
	  "legacy_credentials|access_tokens)|\\.azure/(accesstokens|msal_token_cache|azureprofile)|"
	  "\\.kube/config\\b|\\.docker/config\\.json|\\.config/gh/hosts\\.yml)",
	  "reads cloud or cluster credentials" },
	{ "credentials/browser-store", "credentials", CRIT, A, 1,
	  "(google-chrome|chromium|brave|microsoft edge|BraveSoftware)[^\\n]{0,80}"
	  "(login data|cookies|web data|local state)"
	  "|\\b(logins\\.json|key[34]\\.db|cookies\\.sqlite|signons\\.sqlite)\\b",
	  "reads a browser's saved passwords or cookies" },
	{ "credentials/netrc-git", "credentials", HIGH, A, 1,
	  "(~|\\$home|home)/\\.(netrc|git-credentials|npmrc|pypirc|pgpass|my\\.cnf)\\b"
	  "|\\bgit\\s+credential\\s+fill\\b",
	  "reads stored passwords (.netrc, git credentials, .npmrc)" },
	{ "credentials/dotenv-read", "credentials", HIGH, C, 0,
	  "\\b(cat|less|more|head|tail|cp|base64|tar|zip)\\s+[^\\n|;]{0,60}(^|[\\s/\"'])\\.env\\b"
	  "|\\b(open|read_text|readFileSync|load_dotenv)\\s*\\([^\\n)]{0,80}(\\.\\./|~/|/home/|"
	  "/root/|expanduser)[^\\n)]{0,40}\\.env\\b",
	  "reads another project's or the user's .env file" },
	{ "credentials/keychain", "credentials", HIGH, A, 1,
	  "\\bsecurity\\s+(find-generic-password|find-internet-password|dump-keychain)\\b"
	  "|\\bsecret-tool\\s+(lookup|search)\\b|\\b(kwallet-query|keyring\\s+get)\\b"
	  "|/etc/shadow\\b|\\bmimikatz\\b|\\blsass\\b|\\bkey=clear\\b|\\bcmdkey\\s+/list\\b",
	  "reads the system's keychain or password database" },

	/* --- persistence and tampering ------------------------------------------------------ */
	{ "persistence/shell-rc", "persistence", HIGH, A, 1,
	  "(>>|tee\\s+-a|open\\s*\\([^\\n]{0,60}[\"']a[\"'])[^\\n]{0,60}"
	  "(~|\\$home|\\$\\{home\\}|/home/[^/\\s]+|/root|expanduser\\([\"']~)/\\."
	  "(bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|config/fish/config\\.fish)"
	  "|(\\.bashrc|\\.zshrc|\\.profile|\\.bash_profile)[^\\n]{0,20}[\"']?\\s*,\\s*[\"']a[\"']",
	  "changes the user's shell start-up files" },
	{ "persistence/cron-systemd", "persistence", HIGH, A, 1,
	  "\\bcrontab\\s+(-u\\s+\\S+\\s+)?(-(\\s|$|[\"')])|[\"'/~$<])"
	  "|\\(\\s*crontab\\s+-l[^\\n]{0,80}\\)\\s*\\|\\s*crontab\\b"
	  "|>>?\\s*/etc/cron|>>?\\s*/var/spool/cron|\\bsystemctl\\s+(--user\\s+)?enable\\b"
	  "|(>>?|\\btee\\b|\\bcp\\b|\\bmv\\b|\\bln\\s+-s)[^\\n]{0,80}((~|\\$home)/\\.config/systemd/user/|"
	  "/etc/systemd/system/)|\\blaunchctl\\s+load\\b"
	  "|(>>?|\\btee\\b|\\bcp\\b|\\bmv\\b)[^\\n]{0,80}/library/launch(agents|daemons)/",
	  "installs itself to run again later (cron, systemd, launchd)" },
	{ "persistence/agent-config", "persistence", CRIT, A, 1,
	  "(>>?|\\btee\\b|\\bcp\\b|\\bmv\\b|\\bln\\s+-s|\\bsed\\s+-i|\\bwrite(File(Sync)?|_text)?\\b|"
	  "\\bjson\\.dump|\\bopen\\s*\\([^\\n]{0,60}[\"'][wa]\\+?[\"']|\\b(add|update|modify|edit|change|"
	  "insert|append|overwrite|replace)\\b)[^\\n]{0,120}" AGENT_CONFIG
	  "|" AGENT_CONFIG "[^\\n]{0,120}(>>?|\\btee\\b|\\bwrite|\\bjson\\.dump|[\"'][wa]\\+?[\"']\\s*\\))",
	  "changes an agent's or MCP client's configuration" },
	{ "persistence/ssh-keys", "persistence", CRIT, A, 1,
	  "(>>|tee\\s+-a|write|append)[^\\n]{0,80}\\.ssh/authorized_keys",
	  "adds a key to the user's authorized_keys" },
	{ "persistence/system", "persistence", HIGH, A, 1,
	  "(>>?|\\btee\\b|\\bcp\\b|\\bmv\\b|\\bln\\s+-s|\\bsed\\s+-i|\\binstall\\b)[^\\n]{0,60}"
	  "/etc/(sudoers|ld\\.so\\.preload|rc\\.local|profile\\.d/)"
	  "|\\b(export\\s+)?LD_PRELOAD=[\"']?[/.~$\\w]"
	  "|\\bgit\\s+config\\s+--global\\s+core\\.(hooksPath|sshCommand|pager|editor)\\b"
	  "|(>>?|\\bcp\\b|\\bmv\\b|\\bln\\s+-s|\\bwrite)[^\\n]{0,40}\\.git/hooks/(pre|post)-",
	  "changes the system's or git's behaviour for everything after it" },
	{ "destructive/rm-root", "destructive", CRIT, A, 1,
	  "\\brm\\s+(-[a-z]*\\s+)*-[a-z]*(r[a-z]*f|f[a-z]*r)[a-z]*\\s+(-[a-z-]+\\s+)*"
	  "(--no-preserve-root\\s+)?[\"']?(/|/\\*|~/?|~/\\*|\\$home/?|\\$\\{home\\}/?|/home/?|/etc/?|/usr/?|"
	  "/var/?|\\*|\\.\\./\\.\\.)[\"']?(\\s|;|&|\\||$)"
	  "|\\bshutil\\.rmtree\\s*\\(\\s*(home|home_?dir|(pathlib\\.)?Path\\.home\\(\\)|"
	  "os\\.path\\.expanduser\\(\\s*[\"']~/?[\"']\\s*\\)|os\\.environ\\[[\"']HOME[\"']\\]|"
	  "os\\.path\\.expanduser\\(\\s*[\"'](/|~|/home|/etc)[\"']|[\"'](/|~|/home|/etc)[\"'])\\s*[,)]"
	  "|\\bfs\\.(rm|rmdir)Sync\\s*\\(\\s*(os\\.homedir\\(\\)|[\"']/[\"'])",
	  "deletes the home directory or the system" },
	{ "destructive/disk", "destructive", CRIT, A, 1,
	  "\\bmkfs(\\.[a-z0-9]+)?\\s+/dev/|\\bdd\\s+[^\\n]{0,80}of=/dev/(sd|nvme|vd|hd|xvd|disk|mmcblk)"
	  "|>\\s*/dev/(sd[a-z]|nvme\\d|vd[a-z])\\b|\\bwipefs\\s+-a\\b|\\bshred\\s+[^\\n]{0,40}/dev/",
	  "overwrites a disk" },
	{ "destructive/fork-bomb", "destructive", CRIT, A, 1,
	  ":\\s*\\(\\s*\\)\\s*\\{\\s*:\\s*\\|\\s*:\\s*&\\s*\\}\\s*;\\s*:"
	  "|\\bwhile\\s+true\\s*;\\s*do\\s+[^\\n]{0,40}&\\s*done|os\\.fork\\(\\)[^\\n]{0,40}while\\s+true",
	  "a fork bomb" },
	{ "destructive/history", "destructive", HIGH, A, 1,
	  "\\bgit\\s+push\\s+[^\\n]{0,60}(--force|-f)\\b[^\\n]{0,60}\\b(main|master|--all|--mirror)\\b"
	  "|\\bgit\\s+push\\s+--mirror\\b|\\bgit\\s+filter-branch\\b|\\bgit\\s+reflog\\s+expire\\b"
	  "|\\bDROP\\s+(DATABASE|SCHEMA)\\b(?![^;\\n]{0,80};?\\s*\\n\\s*CREATE\\s+(DATABASE|SCHEMA)\\b)|\\bTRUNCATE\\s+TABLE\\b(?![^\\n]{0,40}\\btemp)"
	  "|\\bchmod\\s+(-R\\s+)?[0-7]?777\\s+/(\\s|$)",
	  "destroys history or data that cannot be brought back" },

	/* --- what a script names or does, suspicious in code alone --------------------- */
	{ "credentials/store-in-code", "credentials", CRIT, C, 0,
	  /* a key made (ssh-keygen) or used (ssh -i, ssh-add) is not one read */
	  "^(?![^\\n]*(\\bssh-keygen\\b|\\bssh-add\\b|\\b(ssh|scp|sftp)\\s+(-\\w+\\s+)*-i\\b|identityfile))"
	  "[^\\n]*?(\\.ssh/(id_(rsa|dsa|ecdsa|ed25519)\\b(?!\\.pub)|\\*|[\\w.-]*\\.pem\\b)|\\.aws/(credentials|config|sso)\\b"
	  "|\\.config/gcloud/|\\.azure/|\\.kube/config\\b|\\.docker/config\\.json|\\.cargo/credentials"
	  "|\\.gem/credentials|\\.config/gh/hosts|(^|[\\s\"'/~])\\.(npmrc|pypirc|netrc|git-credentials|pgpass)\\b"
	  "|[\"'](\\.ssh|\\.aws|\\.gnupg|\\.kube|\\.azure|\\.docker|\\.password-store)[\"']"
	  "|\\b(login\\s+data|logins\\.json|key[34]\\.db|cookies\\.sqlite)\\b)",
	  "a script reaches for a store of credentials (keys, cloud, registries, browsers)" },
	{ "persistence/agent-config-in-code", "persistence", HIGH, C, 0, AGENT_CONFIG
	  "|claude_desktop_config|[\"']\\.claude[\"']|[\"']\\.cursor[\"']",
	  "a script reaches for an agent's or MCP client's configuration" },
	{ "dependencies/runtime-install", "dependencies", HIGH, C, 0,
	  "[\"']pip3?[\"']\\s*,\\s*[\"']install[\"']|[\"']-m[\"']\\s*,\\s*[\"']pip[\"']"
	  "|\\b(os\\.system|subprocess\\.\\w+|execSync|spawnSync|exec)\\s*\\(\\s*[`\"'f]+[^\\n]{0,40}"
	  "\\b(pip3?|npm|yarn|pnpm)\\s+(install|add|i)\\b",
	  "installs packages while it runs: what is installed is decided then, unreviewed" },
	{ "remote-code/eval-after-fetch", "remote-code", HIGH, C, 0,
	  "(?s)\\b(https?\\.get|fetch|requests\\.get|urlopen|axios\\.get|httpx\\.get|got)\\s*\\("
	  ".{0,3000}?(\\b(eval|new\\s+Function|vm\\.runIn\\w+)\\s*\\(|(?<![.\\w])exec\\s*\\(\\s*(?![\"'`]))",
	  "fetches text, then evaluates code" },
	{ "exfiltration/env-in-payload", "exfiltration", CRIT, C, 0,
	  "(?s)(dict\\s*\\(\\s*os\\.environ\\s*\\)|os\\.environ\\.copy\\(\\)|\\{\\s*\\*\\*os\\.environ|"
	  "[:=]\\s*process\\.env\\s*[,}\\n]|JSON\\.stringify\\(\\s*process\\.env\\s*\\)|"
	  "(Get-ChildItem|gci|dir|ls)\\s+env:)"
	  "(?=.{0,4000}?\\b(requests\\.(post|put)|urlopen|fetch\\s*\\(|axios|https?\\.request|"
	  "invoke-(restmethod|webrequest)|irm|iwr)\\b)",
	  "puts the whole environment in what it sends out" },
	{ "exfiltration/git-push-elsewhere", "exfiltration", HIGH, C, 0,
	  "(?s)\\bgit\\s+remote\\s+add\\s+\\S+\\s+[\"']?(https?|ssh|git)://.{0,2000}?\\bgit\\s+push\\b",
	  "adds a remote and pushes the repository to it" },
	{ "exfiltration/markdown-image", "exfiltration", HIGH, T, 2,
	  "!\\[[^\\]\\n]{0,100}\\]\\(\\s*https?://[^)\\s]{0,200}\\?[^)\\s]{0,200}=\\s*(\\{|\\$|<|\\[|"
	  "(data|secret|token|key|content|context|conversation|history|password|env)\\b)",
	  "an image whose address carries data: loading it sends that data" },

	/* --- other ecosystems and languages ------------------------------------------------ */
	{ "injection/other-language", "injection", CRIT, A, 2,
	  "\\bignore[sz]?\\s+(toutes\\s+)?les\\s+instructions\\s+(pr[ée]c[ée]dentes|ant[ée]rieures)"
	  "|\\binstructions\\s+(pr[ée]c[ée]dentes|ant[ée]rieures)\\s+ne\\s+s'appliquent\\s+plus"
	  "|\\bsans\\s+(demander|solliciter)\\s+(de\\s+)?confirmation|\\bne\\s+(le\\s+|la\\s+|les\\s+)?"
	  "(mentionne[sz]?|dis|dites|signale[sz]?)\\s+pas\\s+(à|a)\\s+l'utilisat"
	  "|\\bignora\\s+(todas\\s+)?las\\s+instrucciones\\s+(anteriores|previas)"
	  "|\\binstrucciones\\s+(anteriores|previas)\\s+ya\\s+no\\s+(aplican|se\\s+aplican)"
	  "|\\bsin\\s+(pedir|solicitar)\\s+confirmaci[óo]n|\\bno\\s+(se\\s+lo\\s+|lo\\s+)?"
	  "(menciones|digas|informes)\\s+al\\s+usuario"
	  "|\\bignoriere\\s+(alle\\s+)?(vorherigen|bisherigen|fr[üu]heren)\\s+(anweisungen|regeln)"
	  "|\\bohne\\s+(r[üu]ck)?(frage|best[äa]tigung|nachfrage)\\b|\\bnicht\\s+(dem\\s+)?"
	  "(nutzer|benutzer|anwender)\\s+(mitteilen|sagen|erw[äa]hnen)|\\b(dem\\s+)?(nutzer|benutzer)\\s+"
	  "nicht\\s+(mitteilen|sagen|erw[äa]hnen)",
	  "instructions to the model in another language: ignore the rules, no confirmation, say "
	  "nothing" },
	{ "injection/precedence", "injection", HIGH, A, 2,
	  "\\b(takes?|has)\\s+precedence\\s+over\\s+(all|any|every)\\s+(other\\s+)?(instructions|rules|"
	  "skills|guidelines|system)|\\bsupersedes?\\s+(all|any|every)\\s+(other\\s+|previous\\s+|prior\\s+)?"
	  "(instructions|rules|guidelines)|\\boverrides?\\s+(all|any)\\s+(other\\s+)?(instructions|"
	  "system\\s+prompts?|guidelines)",
	  "claims to outrank the model's other instructions" },
	{ "remote-code/powershell-download-run", "remote-code", CRIT, A, 1,
	  "(?s)\\b(downloadstring|downloaddata|invoke-restmethod|irm|invoke-webrequest|iwr)\\b.{0,300}?"
	  "(\\[scriptblock\\]::create|\\binvoke-expression\\b|\\biex\\b)"
	  "|(\\[scriptblock\\]::create|\\binvoke-expression\\b|\\biex\\b)\\s*\\(?[^\\n]{0,80}"
	  "(downloadstring|invoke-restmethod|irm|iwr)\\b",
	  "PowerShell that runs what it downloads" },
	{ "remote-code/unsafe-load-fetched", "remote-code", HIGH, C, 0,
	  "(?s)\\b(urlopen|urlretrieve|requests\\.get|httpx\\.get|download\\w*|fetch)\\b.{0,2000}?"
	  "\\b(pickle\\.loads?|cPickle\\.loads?|dill\\.loads?|joblib\\.load|torch\\.load|marshal\\.loads|"
	  "yaml\\.load\\s*\\((?![^)]*safe)|yaml\\.unsafe_load)\\s*\\("
	  "|\\bnew\\s+vm\\.Script\\b|\\bTOPLEVEL_BINDING\\.eval\\b|\\beval\\s*\\(\\s*(Net::HTTP\\.get|open-uri|"
	  "URI\\.open|URI\\.parse[^)]*\\)\\.read)",
	  "deserialises or evaluates what it downloads (pickle, vm.Script, Ruby eval)" },
	{ "remote-code/binary-fetched-run", "remote-code", HIGH, C, 0,
	  "(?s)\\b(wget|curl)\\b[^\\n]{0,200}(-O|-o|--output(-document)?)\\s*\"?(\\S+)\"?[^\\n]{0,200}"
	  "\\bchmod\\s+(\\+x|[0-7]?[75][0-7][0-7])\\b"
	  "|\\bhttp\\.Get\\b.{0,2000}?\\bos\\.WriteFile\\s*\\([^)]*0?o?7[0-7][0-7]\\s*\\).{0,2000}?"
	  "\\bexec\\.Command\\b",
	  "downloads a program, makes it executable, and runs it" },
	{ "destructive/wipe-tree", "destructive", CRIT, A, 1,
	  "\\bfind\\s+[\"']?(\\$\\{?home\\}?|~|/)[^\\s]*[\"']?\\s[^\\n|;]{0,120}-delete\\b"
	  "|\\bterraform\\s+(destroy|apply\\s+-destroy)\\b[^\\n]{0,80}-auto-approve\\b"
	  "|\\bvssadmin(\\.exe)?\\s+delete\\s+shadows\\b|\\bwmic\\s+shadowcopy\\s+delete\\b"
	  "|\\b(remove-item|ri|rm|del|rd)\\b[^\\n]{0,100}(\\$env:(userprofile|homepath|systemdrive)|\\$home|"
	  "c:\\\\\\\\?)[^\\n]{0,60}-recurse\\b|\\b(remove-item|ri)\\b[^\\n]{0,40}-recurse[^\\n]{0,60}"
	  "(\\$env:(userprofile|homepath)|\\$home\\b)"
	  "|\\bos\\.(OpenFile|Create)\\s*\\(\\s*\"/dev/(sd|nvme|vd|hd|disk|mmcblk)",
	  "wipes a home, a disk, snapshots, or an infrastructure's resources without asking" },
	{ "persistence/autostart", "persistence", HIGH, A, 1,
	  "currentversion\\\\+run(once)?\\b|\\bschtasks(\\.exe)?\\s+/create\\b|\\bregister-scheduledtask\\b"
	  "|\\bnew-scheduledtasktrigger\\s+-atlogon\\b|/library/launchagents/|library/launchagents\\b"
	  "|\\bRunAtLoad\\b|\\bstartup\\\\+[^\\n]{0,40}\\.(lnk|bat|cmd|vbs)\\b",
	  "starts itself at login (Run keys, scheduled tasks, launch agents)" },
	{ "persistence/hooks-and-tasks", "persistence", HIGH, A, 1,
	  "\\bcore\\.(fsmonitor|hookspath)\\b|\"runOn\"\\s*:\\s*\"folderOpen\""
	  "|task\\.allowAutomaticTasks\"?\\s*[:=]\\s*\"?on|security\\.workspace\\.trust\\.enabled\"?\\s*[:=]\\s*"
	  "false|\\bPermitLocalCommand\\s+yes\\b|^\\s*LocalCommand\\s"
	  "|\\.pth\\b[^\\n]{0,200}(site-packages|getsitepackages|usersite)"
	  "|(site-packages|getsitepackages|usersite)[^\\n]{0,200}\\.pth\\b"
	  "|\\bbypassPermissions\\b|--dangerously-skip-permissions",
	  "runs code at a tool's, an editor's or an agent's every start, or turns its checks off" },
	{ "dependencies/insecure-source", "dependencies", HIGH, C, 0,
	  "\\bGOPROXY\\s*=\\s*[\"']?http://|\\bGOSUMDB\\s*=\\s*[\"']?off\\b|\\bGONOSUMDB\\s*=|\\bGOINSECURE\\s*="
	  "|\\bsource\\s+[\"']http://|--trusted-host\\b|\\ballow-insecure-host\\b"
	  "|\\bindex-url\\s*=\\s*http://|\\bregistry\\s*=\\s*http://|\\bstrict-ssl\\s*=?\\s*false\\b",
	  "packages fetched without TLS or without their checksums checked" },
	{ "exfiltration/ci-secrets", "exfiltration", CRIT, C, 0,
	  "\\btoJSON\\s*\\(\\s*secrets\\s*\\)|\\$\\{\\{\\s*toJSON\\(secrets\\)",
	  "sends every secret of a CI workflow" },

	/* --- the scanner's own ------------------------------------------------------------- */
	{ "scanner/incomplete", "scanner", HIGH, A, 0, NULL,
	  "the scan stopped at its time budget: what it did not read is not judged" },
	{ "hidden-unicode/tag-characters", "hidden-unicode", CRIT, A, 0, NULL,
	  "Unicode tag characters: ASCII spelt invisibly" },
	{ "hidden-unicode/bidi-control", "hidden-unicode", HIGH, A, 0, NULL,
	  "a bidirectional control: text shown in another order than it is read (Trojan Source)" },
	{ "hidden-unicode/invisible", "hidden-unicode", HIGH, A, 0, NULL,
	  "zero-width or invisible characters inside words" },
	{ "hidden-unicode/control", "hidden-unicode", HIGH, A, 0, NULL,
	  "terminal escape sequences or control characters" },
	{ "secrets/hard-coded", "secrets", HIGH, A, 0, NULL,
	  "a credential written into the skill (the redactor's rules, docs/REDACTION.md)" },
	{ "secrets/possible", "secrets", MED, A, 0, NULL,
	  "what may be a credential: a password assigned, a long random string" },
	{ "dependencies/typosquat", "dependencies", HIGH, C, 0, NULL,
	  "a package named one or two letters from a popular one" },
	{ "dependencies/unpinned", "dependencies", MED, C, 0, NULL,
	  "a package installed without a version: whatever is published next runs" },
	{ "dependencies/nothing-pinned", "dependencies", HIGH, C, 0, NULL,
	  "a requirements file or package.json with no package's version fixed" },
	{ "dependencies/install-script", "dependencies", MED, C, 0, NULL,
	  "package.json runs a script when it is installed (preinstall, install, postinstall)" },
	{ "dependencies/untrusted-index", "dependencies", HIGH, C, 0, NULL,
	  "packages from an index or URL other than the public registry's" },
};

const size_t builtin_rules_n = sizeof(builtin_rules) / sizeof(builtin_rules[0]);

/* What a file must hold, in ASCII lower case, for a rule's pattern to
 * match it at all: one of the words (|-separated). Every match of the
 * pattern has one of them, so a file without any is passed over without
 * running the pattern, which is most files for most rules. A rule not
 * listed runs on every file of its class. */
const struct builtin_need builtin_needs[] = {
	{ "injection/ignore-instructions", "ignore|disregard|forget|override" },
	{ "injection/hide-from-user", "user" },
	{ "injection/persona", "dan|mode|unrestricted|unfiltered|uncensored|jailbroken|amoral|"
			       "unaligned|pretend|restrictions|filters|rules|limits|guidelines|"
			       "ethics|rest of" },
	{ "injection/no-confirmation", "confirmation|approval|permission|consent|bypass|skip|"
				       "disable|turn|circumvent|auto" },
	{ "injection/tool-coercion", "before|instead|rather" },
	{ "injection/prompt-markup", "<|inst]" },
	{ "injection/addressed-to-model", "note|message|instruction|reminder|reading|processing|"
					  "parsing|if you are" },
	{ "injection/html-comment", "<!--" },
	{ "exfiltration/upload-secrets", "curl|wget|http|nc|socat|telnet" },
	{ "exfiltration/env-dump", "env|set" },
	{ "exfiltration/read-and-send", "requests.|urlopen|fetch|axios.|http.request|smtplib|"
					"sendmail" },
	{ "exfiltration/webhook", "webhook|requestbin|pipedream|ngrok|burpcollaborator|interact.sh|"
				  "oast.|canarytokens|transfer.sh|pastebin|hookbin|beeceptor|discord" },
	{ "exfiltration/dns", "nslookup|dig|host|ping|getent|gethostbyname" },
	{ "exfiltration/email", "mail|mutt|smtplib" },
	{ "remote-code/pipe-to-shell", "curl|wget|fetch|iwr|invoke-webrequest|iex" },
	{ "remote-code/eval-fetched", "exec|eval|function" },
	{ "remote-code/obfuscated-exec", "exec|eval|base64|xxd|powershell|pwsh" },
	{ "remote-code/download-exec", "curl|wget|urlretrieve" },
	{ "credentials/ssh-private-key", ".ssh/" },
	{ "credentials/cloud", ".aws/|gcloud|.azure/|.kube/|.docker/|gh/hosts" },
	{ "credentials/browser-store", "chrom|brave|edge|logins.json|key3.db|key4.db|cookies.sqlite|"
				       "signons.sqlite" },
	{ "credentials/netrc-git", ".netrc|.git-credentials|.npmrc|.pypirc|.pgpass|.my.cnf|"
				   "credential" },
	{ "credentials/dotenv-read", ".env" },
	{ "credentials/keychain", "security|secret-tool|kwallet|keyring|shadow|mimikatz|lsass|"
				  "key=clear|cmdkey" },
	{ "persistence/shell-rc", "bashrc|zshrc|profile|bash_login|zshenv|fish" },
	{ "persistence/cron-systemd", "cron|systemctl|systemd|launchctl|launch" },
	{ "persistence/agent-config", "claude|cursor|vscode|codeium|continue|gemini|codex|copilot" },
	{ "persistence/ssh-keys", "authorized_keys" },
	{ "persistence/system", "sudoers|ld.so.preload|rc.local|profile.d|ld_preload|git" },
	{ "destructive/rm-root", "rm" },
	{ "destructive/disk", "mkfs|dd|/dev/|wipefs|shred" },
	{ "destructive/fork-bomb", "{|while|fork" },
	{ "destructive/history", "git|drop|truncate|chmod" },
	{ "credentials/store-in-code", ".ssh|.aws|gcloud|.azure|.kube|.docker|.cargo|.gem/|gh/hosts|"
				       ".npmrc|.pypirc|.netrc|.git-credentials|.pgpass|.gnupg|"
				       ".password-store|login data|logins.json|key3.db|key4.db|cookies.sqlite" },
	{ "persistence/agent-config-in-code", "claude|cursor|vscode|codeium|continue|gemini|codex|"
					      "copilot" },
	{ "dependencies/runtime-install", "pip|npm|yarn|pnpm" },
	{ "remote-code/eval-after-fetch", "get|fetch|urlopen|got" },
	{ "exfiltration/env-in-payload", "environ|process.env|env:" },
	{ "exfiltration/git-push-elsewhere", "remote" },
	{ "exfiltration/markdown-image", "![" },
	{ "injection/other-language", "instructions|instrucciones|anweisungen|confirmation|"
				      "confirmaci|frage|tigung|mentionne|dis |dites|signale|"
				      "menciones|digas|informes|mitteilen|sagen|erw" },
	{ "injection/precedence", "precedence|supersede|override" },
	{ "remote-code/powershell-download-run", "downloadstring|downloaddata|invoke-restmethod|irm|"
						 "invoke-webrequest|iwr|scriptblock|"
						 "invoke-expression|iex" },
	{ "remote-code/unsafe-load-fetched", "load|vm.script|toplevel_binding|eval" },
	{ "remote-code/binary-fetched-run", "chmod|writefile" },
	{ "destructive/wipe-tree", "delete|destroy|vssadmin|shadowcopy|recurse|/dev/" },
	{ "persistence/autostart", "currentversion|schtasks|scheduledtask|launchagents|runatload|"
				   "startup" },
	{ "persistence/hooks-and-tasks", "fsmonitor|hookspath|runon|allowautomatictasks|"
					 "workspace.trust|permitlocalcommand|localcommand|.pth|"
					 "bypasspermissions|dangerously-skip-permissions" },
	{ "dependencies/insecure-source", "goproxy|gosumdb|gonosumdb|goinsecure|source|"
					  "trusted-host|allow-insecure-host|index-url|registry|"
					  "strict-ssl" },
	{ "exfiltration/ci-secrets", "tojson" },
};

const size_t builtin_needs_n = sizeof(builtin_needs) / sizeof(builtin_needs[0]);
