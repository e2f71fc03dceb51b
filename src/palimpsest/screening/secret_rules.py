"""What the secret detector looks for, as data: the detector (`palimpsest.screening.secrets`) reads it.

A new vendor format is one line in `VENDOR_FORMATS`, with a comment saying what it is:

    # Acme API key.
    Token("acme-api-key", "acme_", "[A-Za-z0-9]{40}"),

`Token(kind, prefix, body, hints, check, runs_ok)`: a secret made of `prefix` and a random
`body` (both regular expressions), ending where a word ends and starting where one starts.
`hints`: literals, separated by spaces, one of which must occur for the rule to run (by
default the prefix, when it is a literal); a format with neither always runs. `check`: a
further test of the body, named: "random" (it must look machine-made, for prefixes that
also start words), "discord-id", "sas" (the detector's `_CHECKS`). `runs_ok`: the format
itself repeats a character (a placeholder test would refuse it).

`Shape(kind, pattern, hints, check, word_start)`: a whole pattern whose group `v` is the
secret (and `b`, if any, its random body), for a secret after a fixed context
(`AccountKey=`) or known by a signature inside; `word_start=False` when the context before
it is part of the pattern.

The order is the order of preference: where two formats find the same secret, the earlier
one names it. Every line needs a case of its own in tests/screening/test_secrets.py `KIND_CASES` (a
test says so).

Then the words the detector reads around a value (credential names, what makes a name not
one), the values it allows (placeholders, documented examples, public prefixes), passwords
given on command lines, the look-alike letters it reads as the Latin ones they imitate, and
the credential words of other languages with the verbs that join them to a value.
"""

# ruff: noqa: E501  (the table holds one format per line, however long its pattern)

from __future__ import annotations

from typing import NamedTuple


class Token(NamedTuple):
    kind: str
    prefix: str
    body: str
    hints: str = ""
    check: str = ""
    runs_ok: bool = False


class Shape(NamedTuple):
    kind: str
    pattern: str
    hints: str = ""
    check: str = ""
    word_start: bool = True


B64 = "[A-Za-z0-9+/]"
UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
END = r"(?![A-Za-z0-9_])"  # a token ends where a word does

# fmt: off
VENDOR_FORMATS: tuple[Token | Shape, ...] = (
    # -- Palimpsest's own HTTP access keys (service/access.py): never filed as memory.
    Token("palimpsest-access-key", "palimpsest_k_", "[0-9a-z]{20}_[0-9a-f]{48}"),
    # -- Cloud providers
    # AWS access key id: AKIA (long-term), ASIA (session), ABIA, ACCA, A3T (older).
    Token("aws-access-key-id", "A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA", "[A-Z0-9]{16}", "AKIA ASIA ABIA ACCA A3T"),
    # AWS Marketplace Web Service auth token.
    Token("aws-mws-key", r"amzn\.mws\.", UUID, "amzn.mws."),
    # Google API key (Maps, Firebase, Gemini / Google AI Studio).
    Token("google-api-key", "AIza", r"[0-9A-Za-z_\-]{35}"),
    # Google OAuth client secret, access token (ya29.) and refresh token (1//0).
    Token("google-oauth-client-secret", "GOCSPX-", r"[0-9A-Za-z_\-]{28}"),
    Token("google-oauth-token", r"ya29\.", r"[0-9A-Za-z_\-]{30,}", "ya29."),
    Token("google-oauth-token", "1//0", r"[0-9A-Za-z_\-]{40,}"),
    # Azure storage connection string: AccountKey=<88 base64>.
    Shape("azure-storage-key", rf"AccountKey=(?P<v>{B64}{{40,}}={{0,2}})", "AccountKey="),
    # Azure Service Bus / Event Hubs / Relay connection string: SharedAccessKey=<44 base64>.
    Shape("azure-shared-access-key", rf"SharedAccessKey=(?P<v>{B64}{{40,}}={{0,2}})", "SharedAccessKey="),
    # Azure shared access signature: the sig= of a SAS URL.
    Shape("azure-sas-token", r"[?&]sig=(?P<v>[A-Za-z0-9%+/]{30,}={0,2})", "sig=", "sas"),
    # Azure AD (Entra ID) client secret: 3 chars, a digit, "Q~", 31-34 chars.
    Shape("azure-ad-client-secret", rf"(?P<v>[A-Za-z0-9_~.]{{3}}\dQ~[A-Za-z0-9_~.\-]{{31,34}}){END}", "Q~"),
    # Azure keys with a fixed signature inside: storage (AZSt), Cosmos DB (ACDb), Service
    # Bus / Event Hubs / Relay (+ASb/+AEh/+ARm), Functions (AzFu), Search (AzSe), Cache for
    # Redis (AzCa), Container Registry (+ACR), and the common annotated key format (JQQJ9).
    Shape("azure-storage-key", rf"(?P<v>{B64}{{76}}(?:AZSt|\+ASt){B64}{{5}}[AQgw]==)", "AZSt +ASt"),
    Shape("azure-cosmosdb-key", rf"(?P<v>{B64}{{76}}ACDb{B64}{{5}}[AQgw]==)", "ACDb"),
    Shape("azure-access-key", rf"(?P<v>{B64}{{33}}\+A(?:Sb|Eh|Rm){B64}{{5}}[AEIMQUYcgkosw048]=)", "+ASb +AEh +ARm"),
    Shape("azure-access-key", r"(?P<v>[A-Za-z0-9_\-]{44}AzFu[A-Za-z0-9_\-]{5}[AQgw]==)", "AzFu"),
    Shape("azure-access-key", r"(?P<v>[A-Za-z0-9]{42}AzSe[A-D][A-Za-z0-9]{5})", "AzSe"),
    Shape("azure-access-key", r"(?P<v>[A-Za-z0-9]{33}AzCa[A-P][A-Za-z0-9]{5}=)", "AzCa"),
    Shape("azure-access-key", rf"(?P<v>{B64}{{42}}\+ACR[A-Za-z0-9]{{6}})", "+ACR"),
    Shape("azure-access-key", r"(?P<v>[A-Za-z0-9]{52}JQQJ9[A-Za-z0-9_\-]{10,40})", "JQQJ9"),
    # DigitalOcean personal access, OAuth and refresh tokens.
    Token("digitalocean-token", "do[por]_v1_", "[a-f0-9]{64}", "_v1_"),
    # Databricks personal access token.
    Token("databricks-token", "dapi", r"[a-fA-F0-9]{32}(?:-\d)?"),
    # Alibaba Cloud AccessKey id.
    Token("alibaba-access-key-id", "LTAI", "[A-Za-z0-9]{12,20}"),
    # Heroku platform API key (HRKU- format).
    Token("heroku-api-key", "HRKU-", r"[A-Za-z0-9_\-]{40,}"),
    # Cloudflare Origin CA key.
    Token("cloudflare-origin-ca-key", r"v1\.0-", "[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    # Fly.io tokens (fo1_ and the macaroon fm1_/fm2_).
    Token("flyio-token", "fo1_", r"[A-Za-z0-9_\-]{43}"),
    Token("flyio-token", r"fm\d_", r"[A-Za-z0-9+/=,_\-]{100,}", "fm1_ fm2_"),
    # HashiCorp Vault service and batch tokens.
    Token("vault-token", r"hv[sb]\.", r"[A-Za-z0-9_\-]{24,}", "hvs. hvb."),
    # Terraform Cloud / Enterprise API token.
    Shape("terraform-cloud-token", rf"(?P<v>[A-Za-z0-9]{{14}}\.atlasv1\.(?P<b>[A-Za-z0-9_=\-]{{60,70}})){END}", "atlasv1"),
    # Doppler service, CLI, SCIM, audit and personal tokens.
    Token("doppler-token", r"dp\.(?:st|ct|sa|scim|audit|pt)\.", r"(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}", "dp."),
    # Pulumi access token.
    Token("pulumi-token", "pul-", "[a-f0-9]{40}"),
    # Supabase personal access token and secret API key.
    Token("supabase-token", "sbp_", "[a-f0-9]{40}"),
    Token("supabase-token", "sb_secret_", r"[A-Za-z0-9_\-]{20,}"),
    # Netlify and Render personal access tokens.
    Token("netlify-token", "nfp_", "[A-Za-z0-9]{36}"),
    Token("render-api-key", "rnd_", "[A-Za-z0-9]{32}"),
    # age file-encryption secret key.
    Token("age-secret-key", "AGE-SECRET-KEY-1", "[0-9A-Z]{58}"),
    # Grafana Cloud API token and service-account token.
    Token("grafana-token", "glc_", "[A-Za-z0-9+/]{32,}={0,2}"),
    Token("grafana-token", "glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    # New Relic user API key.
    Token("newrelic-api-key", "NRAK-", "[A-Z0-9]{27}"),
    # Sentry organization and user auth tokens.
    Token("sentry-token", "sntrys_", r"eyJ[A-Za-z0-9+/=_\-]{50,}"),
    Token("sentry-token", "sntryu_", "[a-f0-9]{64}"),
    # PostHog personal API key (phc_ project keys are public).
    Token("posthog-personal-key", "phx_", "[A-Za-z0-9]{40,}"),
    # Dynatrace API token.
    Token("dynatrace-token", r"dt0c01\.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}", "dt0c01."),
    # -- Source hosts
    # GitHub classic PAT, OAuth, user-to-server, server-to-server (app) and refresh tokens.
    Token("github-pat", "ghp_", "[A-Za-z0-9]{36,251}"),
    Token("github-oauth-token", "gho_", "[A-Za-z0-9]{36,251}"),
    Token("github-user-token", "ghu_", "[A-Za-z0-9]{36,251}"),
    Token("github-app-token", "ghs_", "[A-Za-z0-9]{36,251}"),
    Token("github-refresh-token", "ghr_", "[A-Za-z0-9]{36,251}"),
    # GitHub fine-grained PAT: github_pat_ + 22 + _ + 59.
    Token("github-fine-grained-pat", "github_pat_", "[A-Za-z0-9_]{40,251}"),
    # GitLab personal, deploy and runner tokens, other gl*- tokens, runner registration.
    Token("gitlab-pat", "glpat-", r"[A-Za-z0-9_.\-]{20,}"),
    Token("gitlab-deploy-token", "gldt-", r"[A-Za-z0-9_.\-]{20,}"),
    Token("gitlab-runner-token", "glrt-", r"[A-Za-z0-9_.\-]{20,}"),
    Token("gitlab-runner-token", "GR1348941", r"[A-Za-z0-9_\-]{20,}"),
    Token("gitlab-token", "gl(?:ptt|oas|cbt|imt|ft|soat|agent|ffct|tst)-", r"[A-Za-z0-9_.\-]{20,}", "gl"),
    # Bitbucket app password and Atlassian API token.
    Token("bitbucket-app-password", "ATBB", r"[A-Za-z0-9_=.\-]{28,}"),
    Token("atlassian-api-token", "ATATT3", r"[A-Za-z0-9_\-=]{150,}"),
    # -- Chat
    # Slack bot token (xoxb-<team>-<bot>-<secret>) and user token (xoxp-...).
    Token("slack-bot-token", "xoxb-", r"\d{6,}-\d{6,}-[A-Za-z0-9]{16,}"),
    Token("slack-user-token", "xoxp-", r"\d{6,}(?:-[A-Za-z0-9]{6,}){2,4}"),
    # Slack legacy, workspace, refresh and configuration tokens.
    Token("slack-token", r"(?:xoxe\.)?xox[aorse]-", r"\d+-[0-9A-Za-z\-]{20,}", "xox"),
    Token("slack-token", r"xoxe\.xox[bp]-\d-", "[A-Za-z0-9]{100,}", "xoxe."),
    # Slack app-level token: xapp-1-<app>-<n>-<hex>.
    Token("slack-app-token", r"xapp-\d-", r"[A-Z0-9]{6,}-\d{6,}-[a-f0-9]{32,}", "xapp-"),
    # Slack incoming webhook / workflow URL.
    Token("slack-webhook", r"https://hooks\.slack\.com/", r"(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{40,}", "hooks.slack.com"),
    # Discord bot token: base64(bot id).<timestamp>.<hmac>; and webhook URL.
    Shape("discord-bot-token", rf"(?P<v>[MNO][A-Za-z0-9_\-]{{23,25}}\.[A-Za-z0-9_\-]{{6}}\.[A-Za-z0-9_\-]{{27,38}}){END}", check="discord-id"),
    Token("discord-webhook", r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/webhooks/", r"\d{15,20}/[A-Za-z0-9_\-]{60,}", "discord"),
    # Telegram bot token: <bot id>:AA<33>, alone and inside a Bot API URL (.../bot<token>/...).
    Shape("telegram-bot-token", rf"(?P<v>\d{{8,10}}:AA(?P<b>[A-Za-z0-9_\-]{{32,33}})){END}", ":AA"),
    Shape("telegram-bot-token", rf"telegram\.org/(?:file/)?bot(?P<v>\d{{8,10}}:AA(?P<b>[A-Za-z0-9_\-]{{32,33}})){END}", "telegram.org", word_start=False),
    # Microsoft Teams incoming webhook URL.
    Token("teams-webhook", r"https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/", r"[A-Za-z0-9@/_\-]{40,}", "webhook.office.com"),
    # -- Payments
    # Stripe live secret and restricted keys; test-mode keys are credentials too.
    Token("stripe-secret-key", "sk_live_", "[0-9A-Za-z]{16,247}"),
    Token("stripe-restricted-key", "rk_live_", "[0-9A-Za-z]{16,247}"),
    Token("stripe-test-key", "[sr]k_test_", "[0-9A-Za-z]{16,247}", "k_test_"),
    # Stripe webhook signing secret.
    Token("stripe-webhook-secret", "whsec_", "[A-Za-z0-9]{24,}"),
    # Square access token (sq0atp-, EAAA) and OAuth secret.
    Token("square-access-token", "sq0atp-|EAAA", r"[A-Za-z0-9_\-]{22,60}", "sq0atp- EAAA", "random"),
    Token("square-oauth-secret", "sq0csp-", r"[A-Za-z0-9_\-]{43}"),
    # Braintree (PayPal) access token.
    Token("braintree-access-token", r"access_token\$production\$[0-9a-z]{16}\$", "[0-9a-f]{32}", "access_token$"),
    # Plaid access token.
    Token("plaid-access-token", "access-(?:sandbox|development|production)-", UUID, "access-"),
    # Flutterwave secret key.
    Token("flutterwave-secret-key", "FLWSECK(?:_TEST)?-", "[a-h0-9]{32}-X", "FLWSECK"),
    # Shopify access, custom-app and private-app tokens, and shared secret.
    Token("shopify-token", "shp(?:at|ca|pa|ss)_", "[a-fA-F0-9]{32}", "shp"),
    # Shippo and EasyPost API keys.
    Token("shippo-api-key", "shippo_(?:live|test)_", "[a-f0-9]{40}", "shippo_"),
    Token("easypost-api-key", "EZ[AT]K", "[A-Za-z0-9]{54}", "EZAK EZTK"),
    # -- AI providers
    # Anthropic API and admin keys.
    Token("anthropic-api-key", r"sk-ant-(?:api|admin|oat|sid)\d{2}-", r"[A-Za-z0-9_\-]{32,}", "sk-ant-"),
    # OpenRouter key.
    Token("openrouter-api-key", "sk-or-v1-", "[a-f0-9]{64}"),
    # OpenAI project, service-account and admin keys, and legacy keys (T3BlbkFJ inside).
    Token("openai-api-key", "sk-(?:proj|svcacct|admin|None)-", r"[A-Za-z0-9_\-]{20,}", "sk-"),
    Token("openai-api-key", "sk-", "[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "T3BlbkFJ"),
    # Other sk- keys (older OpenAI, DeepSeek, Moonshot, ...): a random body of 32+.
    Token("ai-provider-api-key", "sk-", r"[A-Za-z0-9_\-]{32,}", check="random"),
    # Hugging Face user access token and organization token.
    Token("huggingface-token", "hf_|api_org_", "[A-Za-z0-9]{30,}", "hf_ api_org_", "random"),
    # Groq, Replicate, Perplexity, xAI, LangSmith, Pinecone and ElevenLabs keys.
    Token("groq-api-key", "gsk_", "[A-Za-z0-9]{48,}"),
    Token("replicate-api-token", "r8_", "[A-Za-z0-9]{37}"),
    Token("perplexity-api-key", "pplx-", "[A-Za-z0-9]{40,}"),
    Token("xai-api-key", "xai-", "[A-Za-z0-9]{70,}"),
    Token("langsmith-api-key", "lsv2_(?:pt|sk)_", "[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_"),
    Token("pinecone-api-key", "pcsk_", "[A-Za-z0-9_]{40,}"),
    Token("elevenlabs-api-key", "sk_", "[a-f0-9]{48}"),
    # -- Package registries
    # npm access token; PyPI / TestPyPI API token (a macaroon, "pypi-AgE...").
    Token("npm-token", "npm_", "[A-Za-z0-9]{36}"),
    Token("pypi-token", "pypi-", r"AgE[A-Za-z0-9_\-]{50,}"),
    # RubyGems, NuGet, Docker Hub, Clojars, crates.io and JFrog tokens.
    Token("rubygems-api-key", "rubygems_", "[a-f0-9]{48}"),
    Token("nuget-api-key", "oy2", "[a-z0-9]{43}"),
    Token("dockerhub-token", "dckr_(?:pat|oat)_", r"[A-Za-z0-9_\-]{27,}", "dckr_"),
    Token("clojars-token", "CLOJARS_", "[a-z0-9]{60}"),
    Token("crates-io-token", "cio", "[A-Za-z0-9]{32}", check="random"),
    Token("jfrog-api-key", "AKCp", "[A-Za-z0-9]{69}"),
    # -- Email and messaging
    # SendGrid API key: SG.<22>.<43>.
    Token("sendgrid-api-key", r"SG\.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", "SG."),
    # Twilio API key SID: SK + 32 hex.
    Token("twilio-api-key", "SK", "[0-9a-fA-F]{32}"),
    # Mailgun private key, Mailchimp key (<32 hex>-us<n>), Brevo, MailerSend, Resend.
    Token("mailgun-api-key", "key-", "[0-9a-f]{32}"),
    Shape("mailchimp-api-key", rf"(?P<v>(?P<b>[0-9a-f]{{32}})-us\d{{1,2}}){END}", "-us"),
    Token("brevo-api-key", "xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    Token("mailersend-api-key", r"mlsn\.", "[a-f0-9]{64}", "mlsn."),
    Token("resend-api-key", "re_", "[A-Za-z0-9_]{30,}", check="random"),
    # -- Other services: Linear, Notion, Airtable, Postman, Figma, Dropbox, Twitter/X,
    # Mapbox, SonarQube, Buildkite, CircleCI, Tailscale, Contentful, Prefect, Typeform,
    # 1Password service accounts, and Nostr private keys (bech32 nsec).
    Token("linear-api-key", "lin_api_", "[A-Za-z0-9]{40}"),
    Token("notion-token", "secret_|ntn_", "[A-Za-z0-9]{40,}", "secret_ ntn_", "random"),
    Token("airtable-token", "pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    Token("postman-api-key", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
    Token("figma-token", "figd_", r"[A-Za-z0-9_\-]{40,}"),
    Token("dropbox-token", r"sl\.", r"[A-Za-z0-9_\-]{130,}", "sl."),
    Token("twitter-bearer-token", "A{22}", "[A-Za-z0-9%]{30,}", "A" * 22, runs_ok=True),
    Token("mapbox-secret-token", r"sk\.eyJ", r"[A-Za-z0-9._\-]{50,}", "sk.eyJ"),
    Token("sonarqube-token", "sq[upa]_", "[a-f0-9]{40}", "sqp_ squ_ sqa_"),
    Token("buildkite-token", "bkua_", "[a-f0-9]{40}"),
    Token("circleci-token", "CCIPAT_", "[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    Token("tailscale-key", "tskey-(?:auth|api|client|webhook|scim)-", "[A-Za-z0-9]+-[A-Za-z0-9]{16,}", "tskey-"),
    Token("contentful-token", "CFPAT-", r"[A-Za-z0-9_\-]{43}"),
    Token("prefect-api-key", "pnu_", "[A-Za-z0-9]{36}"),
    Token("typeform-token", "tfp_", r"[A-Za-z0-9_.=\-]{59}"),
    Token("onepassword-service-token", "ops_", r"eyJ[A-Za-z0-9+/=_\-]{200,}"),
    Token("nostr-private-key", "nsec1", "[02-9ac-hj-np-z]{58}"),
)
# fmt: on


# -- Passwords on a command line or in a call: (hints, command, value). With a command,
# every value pattern on the rest of its line counts (`mysql -uroot -pX`), and the text must
# hold a " -" flag; without one, the value pattern stands alone. Each entry runs only when
# one of its hints occurs. Group `v` is the password.
_Q = "[\"']?"  # an optional opening quote
COMMAND_LINE_PASSWORDS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # mysql/mysqldump/mariadb -pSECRET (no space: "-p" alone prompts).
    (("mysql", "mariadb"), r"\b(?:mysql\w*|mariadb)\b", rf"[ \t]-p{_Q}(?P<v>[^\s'\"-][^\s'\"]*)"),
    # sshpass -p SECRET (right after the command: a later -p is ssh's port).
    (("sshpass",), "", rf"\bsshpass[ \t]+-p[ \t]*{_Q}(?P<v>[^\s'\"]+)"),
    # docker/podman/helm login -p SECRET or --password SECRET.
    (
        ("login",),
        r"\b(?:docker|podman|buildah|nerdctl|helm)[ \t]+(?:registry[ \t]+)?login\b",
        rf"[ \t](?:-p|--password)(?:[ \t]+|=){_Q}(?P<v>[^\s'\"]+)",
    ),
    # redis-cli -a SECRET.
    (("redis-cli",), r"\bredis-cli\b", rf"[ \t]-a[ \t]+{_Q}(?P<v>[^\s'\"]+)"),
    # ldapsearch/ldapadd/... -w SECRET.
    (("ldap",), r"\bldap\w+\b", rf"[ \t]-w[ \t]+{_Q}(?P<v>[^\s'\"]+)"),
    # Windows: net use X: \\host\share /user:DOMAIN\name SECRET.
    (
        ("net use", "NET USE"),
        "",
        r"\b(?i:net[ \t]+use)\b[^\r\n]{0,200}?/user:\S+[ \t]+(?P<v>[^\s/'\"]+)",
    ),
    # mongosh/mongodump/mongo -p SECRET or --password SECRET.
    (
        ("mongo",),
        r"\bmongo\w*\b",
        rf"[ \t](?:-p|--password)(?:[ \t]+|=){_Q}(?P<v>[^\s'\"]+)",
    ),
    # openssl ... -pass pass:SECRET, -passin pass:SECRET, -passout pass:SECRET.
    (("pass:",), "", r"[ \t]-pass(?:in|out)?[ \t]+pass:(?P<v>[^\s'\"]+)"),
    # Oracle: sqlplus user/SECRET@service.
    (
        ("sqlplus", "rman", "expdp", "impdp"),
        "",
        r"\b(?:sqlplus|rman|expdp|impdp)[ \t]+(?:-\w+[ \t]+)*[\w$#]+/(?P<v>[^\s/'\"]+)@[\w.\-:]+",
    ),
    # echo 'SECRET' | sudo -S ...
    (("sudo",), "", rf"\becho[ \t]+{_Q}(?P<v>[^\s'\"|]+){_Q}[ \t]*\|[ \t]*sudo[ \t]+-S\b"),
    # Python requests: auth=("user", "SECRET").
    (
        ("auth=", "auth ="),
        "",
        r"\bauth[ \t]*=[ \t]*\([ \t]*['\"][^'\"\r\n]{1,128}['\"][ \t]*,"
        r"[ \t]*['\"](?P<v>[^'\"\r\n]{1,256})['\"]",
    ),
)


# -- Credential words: every occurrence of a stem (in lowercased text) is a candidate name,
# expanded to the identifier around it ("DB_PASSWORD", "x-api-key", "apiKey").
STEMS = ("pass", "pwd", "pw", "psk", "secret", "token", "key", "cred", "auth")
# The last word of a name that holds a password.
PASSWORD_WORDS = frozenset(
    """password passwd passphrase passcode pwd pass pw passwords psk passwort kennwort
    storepass keypass""".split()
)
# The last word of a name that holds a token or secret.
SECRET_WORDS = frozenset(
    """secret secrets token tokens apikey apikeys credential credentials creds auth
    authtoken secretkey accesskey privatekey clientsecret""".split()
)
# "<qualifier> key" names a secret key; other "... key" names need a random-looking value.
SECRET_KEY_QUALIFIERS = frozenset(
    """api secret private access signing master encryption enc hmac license auth session
    service account admin deploy app consumer client subscription storage write jwt crypto
    cipher aes root shared webhook bot live prod wallet""".split()
)
# "<qualifier> key" that names a password: a Wi-Fi "network key", a VPN pre-shared key.
PASSWORD_KEY_WORDS = frozenset(
    "wifi fi wpa wpa2 wpa3 psk wireless network router vpn shared preshared".split()
)
# Words in a name that make it not a credential: public keys, database keys, tokenizer
# tokens, pagination tokens, counters, and names of places where a secret is kept.
NOT_CREDENTIAL = frozenset(
    """public publishable primary foreign sort partition cache idempotency page next
    continuation pagination bos eos pad unk sep cls mask max min num total count hash range
    row shard routing gpg pgp host object lookup i18n translation unique composite natural
    surrogate dedup dedupe ssh cursor sync id kid""".split()
)
# Last words that say "the value of" the name before them: SECRET_KEY_BASE, token_value.
VALUE_SUFFIXES = frozenset("base value val b64 base64 hex raw plain str string literal".split())
# Plurals that still name one credential ("credentials: ..."); other plurals name a list.
PLURAL_OK = frozenset("passwords secrets tokens keys apikeys credentials creds".split())
# Words between the name and its value that say the value is not the secret itself.
FILL_STOP = frozenset(
    """id ids hash hashes sha sha1 sha256 checksum digest commit fingerprint uuid name url
    uri path file length size count version prefix format type budget limit limits policy
    rotation expiry expires ttl header field endpoint scope scopes public""".split()
)
# Variables, not values: `password = auth`, `key = self.key`.
CODE_VARS = frozenset(
    """password passwd pwd pw secret token key value val args kwargs self auth creds
    credentials config cfg settings opts options params data body payload request req
    response resp user env result none""".split()
)


# -- What is allowed. Words that make a value a placeholder, anywhere in it (each also
# matched UPPER and Capitalised).
PLACEHOLDER_WORDS = tuple(
    """example your changeme change_me change-me replace placeholder dummy sample fake
    redacted insert password passwd username qwerty""".split()
)
# The same for the random body of a vendor token, as a pattern: only what a person types in
# place of one (a body of 36-250 random characters holds "XxXX" or "FAKE" by chance often
# enough to matter).
BODY_PLACEHOLDER = (
    r"x{5,}|X{5,}|\*{3,}|\.{3,}|…|[<>{}]|0123456789|abcdefghij|ABCDEFGHIJ"
    r"|_here|_HERE|(?:here|HERE)$|example|Example|EXAMPLE|your|Your|YOUR_|placeholder|PLACEHOLDER|redacted|REDACTED"
    r"|changeme|CHANGEME|ChangeMe|dummy|DUMMY|sample|SAMPLE|fake"
)
# Whole values that name a thing instead of being it, and famous sample passwords.
STOPWORDS = frozenset(
    """none null nil true false yes no on off empty default required optional unset
    undefined string str int integer bool boolean number text bytes char varchar any object
    secret secrets password passwd pass pwd pw token key apikey api_key credentials creds
    hidden masked redacted sensitive encrypted hashed omitted removed n/a na tbd todo same
    test demo foo bar baz qux abc abc123 admin guest root user username prompt prompted
    stdin keychain keyring vault env environment blank see ask name ****
    changeit letmein p@ssw0rd passw0rd p@55w0rd pa$$word pa55word s3cr3t""".split()
)
# A secret kept by name in the OS keychain (`palimpsest secret set NAME`, palimpsest.keychain):
# `secret:NAME` is a reference, like `vault:` or `op://`. It ends with a letter or digit, so
# the full stop of a sentence is not part of it; a NAME that looks random is no name.
SECRET_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._/-]{0,98}[A-Za-z0-9])?"
# Known documented example credentials (jwt.io's sample signature, Stripe's docs test key).
DOCUMENTED = ("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "sk_test_4eC39HqLyjWDarjtT1zdp7dc")
# Values that are public by design, whatever word names them: Stripe publishable keys,
# content hashes, SSH public keys, age and Nostr public keys, PostHog project keys, New Relic
# browser keys, Mapbox public tokens.
PUBLIC_PREFIX = (
    r"^(?:pk_(?:live|test)_|sha(?:1|224|256|384|512)[:-]|md5[:-]|ssh-(?:rsa|ed25519|dss)"
    r"|ecdsa-sha2-|AAAA[BCE]3NzaC|age1|npub1|phc_|NRJS-|pk\.eyJ)"
)


# -- Look-alike letters: Cyrillic and Greek letters a reader takes for Latin ones (those of
# Unicode's confusables data that stand for a Latin letter, and к/κ for k), read as the
# Latin letter, so that `АКІА...` or `раssword=` is read as what it shows. NFKC keeps them.
# fmt: off
LOOKALIKES = {
    # Cyrillic capitals and small letters
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "Ү": "Y", "Ѕ": "S", "І": "I", "Ӏ": "I", "Ј": "J", "Ԛ": "Q",
    "Ԝ": "W", "Ѵ": "V", "Ԍ": "G",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "ү": "y", "х": "x", "к": "k",
    "ѕ": "s", "і": "i", "ӏ": "l", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ѵ": "v",
    "ԍ": "g",
    # Greek capitals and small letters
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϳ": "J",
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "ν": "v", "υ": "u", "γ": "y", "κ": "k",
    "ϳ": "j", "σ": "o",
    # Cherokee capitals and small letters (Unicode's confusables.txt)
    "Ꭰ": "D", "Ꭱ": "R", "Ꭲ": "T", "Ꭹ": "Y", "Ꭺ": "A", "Ꭻ": "J", "Ꭼ": "E", "Ꮃ": "W",
    "Ꮇ": "M", "Ꮋ": "H", "Ꮍ": "Y", "Ꮐ": "G", "Ꮒ": "h", "Ꮓ": "Z", "Ꮟ": "b", "Ꮢ": "R",
    "Ꮤ": "W", "Ꮥ": "S", "Ꮩ": "V", "Ꮪ": "S", "Ꮮ": "L", "Ꮯ": "C", "Ꮲ": "P", "Ꮶ": "K",
    "Ꮷ": "d", "Ᏻ": "G", "Ᏼ": "B", "Ꭵ": "i",
    "ꭵ": "i", "ꮁ": "r", "ꮃ": "w", "ꮓ": "z", "ꮩ": "v", "ꮪ": "s", "ꮯ": "c",
    # Latin letters drawn like plain ones (Unicode's confusables.txt)
    "ɡ": "g", "ı": "i", "ɑ": "a", "ɩ": "i", "ɪ": "i", "ʏ": "y", "ᴄ": "c", "ᴏ": "o",
    "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z", "ꜱ": "s", "ſ": "f", "ꭇ": "r", "ꬽ": "o",
    "Ꞵ": "B", "Ʝ": "J", "Ꭓ": "X",
}
# fmt: on


# -- Credential words of other languages: `Language(name, passwords, secrets, verbs, fill,
# compounds, spaced)`, each list a comma-separated string, lowercase, every form a note
# uses written out ("lösenord, lösenordet"). A word is read with the value after it when a
# separator (":", "=", a dash, an arrow) or one of the language's `verbs` stands between
# ("Passwort ist X", "パスワードは X"); `fill`: words that open a qualifier between the word
# and its verb ("le mot de passe du wifi est X"), up to three words long. `compounds`: the
# word may end a longer one ("Datenbankpasswort"). `spaced=False`: words and particles are
# written without spaces between them (Japanese, Chinese, Korean particles). Only words
# that name a credential and nothing else: Spanish "clave" and Italian "parola" (also
# "key" and "word") are left out. The value must look like a password (letters with digits
# or symbols, or quoted) or, after a secret's word, like a random key.
class Language(NamedTuple):
    name: str
    passwords: str
    secrets: str = ""
    verbs: str = ""
    fill: str = ""
    compounds: bool = False
    spaced: bool = True


# fmt: off
LANGUAGES: tuple[Language, ...] = (
    Language("French", "mot de passe, mdp", "clé api, clef api, clé secrète, jeton, jeton d'accès",
             "est, était, sera, est maintenant, est désormais", "du, de, des, d'un, pour"),
    Language("German", "passwort, kennwort", "api-schlüssel, api-key, geheimer schlüssel",
             "ist, war, lautet, ist jetzt, ist nun, lautet jetzt", "für, vom, von, des, der, zum, zur", compounds=True),
    Language("Spanish", "contraseña, contrasena", "clave api, clave de api, clave secreta",
             "es, era, será, es ahora, ahora es", "del, de, para, en"),
    Language("Portuguese", "senha, palavra-passe, palavra passe", "chave api, chave de api, chave secreta",
             "é, era, será, é agora, agora é", "do, da, de, dos, das, para, no, na"),
    Language("Italian", "password", "chiave api, chiave segreta",
             "è, era, sarà, è ora, ora è, adesso è", "del, della, dello, di, per"),
    Language("Dutch", "wachtwoord", "api-sleutel, geheime sleutel",
             "is, was, luidt, is nu, wordt", "van, voor, bij, op", compounds=True),
    Language("Polish", "hasło, hasla, haslo, hasła", "klucz api, tajny klucz",
             "to, jest, brzmi, to jest, teraz to", "do, dla, od, na"),
    Language("Swedish", "lösenord, lösenordet, losenord, losenordet", "api-nyckel, api-nyckeln, hemlig nyckel",
             "är, var, blir, är nu", "till, för, på", compounds=True),
    Language("Norwegian", "passord, passordet", "api-nøkkel, api-nøkkelen",
             "er, var, blir, er nå", "til, for, på", compounds=True),
    Language("Danish", "adgangskode, adgangskoden, kodeord, kodeordet", "api-nøgle, api-nøglen",
             "er, var, bliver, er nu", "til, for, på", compounds=True),
    Language("Russian", "пароль, пароля", "токен, секрет, секретный ключ, ключ api, api-ключ, api ключ",
             "это, теперь, сейчас", "от, для, к, на"),
    Language("Ukrainian", "пароль, пароля", "токен, секрет, секретний ключ, ключ api, api-ключ",
             "це, тепер, зараз", "від, для, до, на"),
    Language("Turkish", "şifre, şifresi, şifreniz, şifrem, sifre, sifresi, parola, parolası, parolasi",
             "api anahtarı, api anahtari, gizli anahtar", "şu, şudur, şöyle"),
    Language("Japanese", "パスワード, 暗証番号", "トークン, シークレット, apiキー, 秘密鍵, アクセスキー, シークレットキー",
             "は, が, は以下, を", spaced=False),
    Language("Chinese", "密码, 密碼, 口令", "令牌, 密钥, 密鑰, 秘钥, api密钥, api key",
             "是, 为, 為, 设为, 改为", spaced=False),
    Language("Korean", "비밀번호, 패스워드, 암호", "토큰, api 키, api키, 비밀 키, 비밀키, 액세스 키",
             "는, 은, 가, 이", spaced=False),
)
# fmt: on
