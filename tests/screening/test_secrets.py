"""The secret detector: each kind refused with its whole value spanned, look-alikes allowed.

Every secret here is generated from its format with a seeded RNG (none is real, and none
comes from the benchmark set, which stays outside the repository).
"""

from __future__ import annotations

import base64
import itertools
import random
import re
import string
import subprocess
import sys
import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.screening.secret_rules import VENDOR_FORMATS, Shape, Token
from palimpsest.screening.secrets import (
    Finding,
    find_in_parts,
    find_secrets,
    redact,
    screening_copy,
)

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def password(rng: random.Random) -> str:
    """A human-made password: a word, a symbol, digits, a few letters ("Maple#4821xQz")."""
    word = rng.choice(["Maple", "orbit", "Falcon", "river", "Quartz", "tango"])
    return word + rng.choice("!@#$%*&") + str(rng.randint(10, 9999)) + rand(rng, 3)


def pem_body(rng: random.Random, der_prefix: bytes, size: int = 600) -> str:
    raw = b64(der_prefix + rng.randbytes(size))
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


def pem(label: str, body: str) -> str:
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def jwt(rng: random.Random) -> str:
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = b64url(f'{{"sub":"{rng.randint(1, 10**9)}","role":"admin"}}'.encode())
    return f"{header}.{claims}.{rand(rng, 43, URLSAFE)}"


def _uuid(rng: random.Random) -> str:
    h = rand(rng, 32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# Each case: (kind, make) where make(rng) returns (text, secret). The text says what an agent
# might paste; the secret is the exact substring a finding must span.
Case = Callable[[random.Random], tuple[str, str]]


def in_text(template: str, secret: Callable[[random.Random], str]) -> Case:
    def make(rng: random.Random) -> tuple[str, str]:
        value = secret(rng)
        return template.format(value), value

    return make


def token(prefix: str, n: int, alphabet: str = ALNUM, suffix: str = "") -> Callable[..., str]:
    return lambda rng: prefix + rand(rng, n, alphabet) + suffix


AWS_ID = token("AKIA", 16, UPPER_DIGITS)
AWS_SECRET = token("", 40, B64)

KIND_CASES: list[tuple[str, Case]] = [
    (
        "palimpsest-access-key",
        in_text(
            "curl -H 'Authorization: Bearer {}' localhost:8765/mcp",
            lambda rng: (
                "palimpsest_k_"
                + rand(rng, 20, "0123456789abcdefghjkmnpqrstvwxyz")
                + "_"
                + rand(rng, 48, HEX)
            ),
        ),
    ),
    # cloud providers
    ("aws-access-key-id", in_text("The nightly job signs requests with {} in eu-west-1.", AWS_ID)),
    ("aws-access-key-id", in_text("session creds: ASIA{}", token("", 16, UPPER_DIGITS))),
    ("aws-secret-access-key", in_text("aws_secret_access_key = {}", AWS_SECRET)),
    (
        "aws-secret-access-key",
        in_text(f"id AKIA{'Q7' * 8}, secret {{}} (staging)", AWS_SECRET),
    ),
    ("google-api-key", in_text("<script src='maps.js?key={}'>", token("AIza", 35, URLSAFE))),
    ("google-oauth-client-secret", in_text("GOOGLE_CLIENT_SECRET={}", token("GOCSPX-", 28))),
    ("google-oauth-token", in_text("access token ya29.{} expires soon", token("", 80, URLSAFE))),
    (
        "azure-storage-key",
        in_text(
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=x",
            token("", 86, B64, "=="),
        ),
    ),
    (
        "azure-shared-access-key",
        in_text(
            "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;"
            "SharedAccessKey={}",
            token("", 43, B64, "="),
        ),
    ),
    (
        "azure-sas-token",
        in_text(
            "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={}",
            token("", 40, ALNUM, "%3D"),
        ),
    ),
    (
        "azure-ad-client-secret",
        in_text(
            "Entra client secret {} for the app registration",
            lambda rng: rand(rng, 3) + "8Q~" + rand(rng, 34, ALNUM + "_~.-"),
        ),
    ),
    (
        "azure-storage-key",
        in_text("key1: {}", lambda rng: rand(rng, 76, B64) + "AZSt" + rand(rng, 5, B64) + "A=="),
    ),
    ("digitalocean-token", in_text("doctl auth init -t {}", token("dop_v1_", 64, HEX))),
    ("databricks-token", in_text("DATABRICKS_TOKEN={}", token("dapi", 32, HEX))),
    ("alibaba-access-key-id", in_text("AccessKeyId: {}", token("LTAI", 20))),
    ("heroku-api-key", in_text("heroku token {}", token("HRKU-AA", 58, URLSAFE))),
    ("vault-token", in_text("VAULT_TOKEN={}", token("hvs.", 90, URLSAFE))),
    (
        "terraform-cloud-token",
        in_text('token = "{}"', lambda rng: f"{rand(rng, 14)}.atlasv1.{rand(rng, 67, ALNUM)}"),
    ),
    ("doppler-token", in_text("DOPPLER_TOKEN={}", token("dp.st.prd.", 43))),
    ("pulumi-token", in_text("PULUMI_ACCESS_TOKEN={}", token("pul-", 40, HEX))),
    ("supabase-token", in_text("supabase login --token {}", token("sbp_", 40, HEX))),
    ("age-secret-key", in_text("# key\n{}", token("AGE-SECRET-KEY-1", 58, UPPER_DIGITS))),
    ("grafana-token", in_text("GRAFANA_SA_TOKEN={}", token("glsa_", 32, ALNUM, "_1a2b3c4d"))),
    ("newrelic-api-key", in_text("NEW_RELIC_API_KEY={}", token("NRAK-", 27, UPPER_DIGITS))),
    ("sentry-token", in_text("SENTRY_AUTH_TOKEN={}", token("sntryu_", 64, HEX))),
    # source hosts
    ("github-pat", in_text("Use this token when pushing: {}", token("ghp_", 36))),
    ("github-oauth-token", in_text('{{"token": "{}"}}', token("gho_", 36))),
    ("github-user-token", in_text("GH_TOKEN={}", token("ghu_", 36))),
    ("github-app-token", in_text("installation token {} (1h)", token("ghs_", 36))),
    ("github-refresh-token", in_text("refresh with {}", token("ghr_", 76))),
    (
        "github-fine-grained-pat",
        in_text("fine-grained PAT: {}", lambda rng: f"github_pat_{rand(rng, 22)}_{rand(rng, 59)}"),
    ),
    ("gitlab-pat", in_text("git clone with PRIVATE-TOKEN: {}", token("glpat-", 20, URLSAFE))),
    ("gitlab-deploy-token", in_text("deploy token {}", token("gldt-", 20, URLSAFE))),
    ("gitlab-runner-token", in_text("gitlab-runner register --token {}", token("glrt-", 20))),
    ("gitlab-token", in_text("trigger token {}", token("glptt-", 40, HEX))),
    ("bitbucket-app-password", in_text("app password {}", token("ATBB", 32))),
    ("atlassian-api-token", in_text("JIRA_API_TOKEN={}", token("ATATT3", 180, URLSAFE))),
    # chat
    (
        "slack-bot-token",
        in_text(
            "SLACK_BOT_TOKEN={}",
            lambda rng: (
                f"xoxb-{rand(rng, 12, string.digits)}-{rand(rng, 13, string.digits)}-"
                + rand(rng, 24)
            ),
        ),
    ),
    (
        "slack-user-token",
        in_text(
            "user token {} for exports",
            lambda rng: (
                "xoxp-"
                + "-".join(rand(rng, 12, string.digits) for _ in range(3))
                + "-"
                + rand(rng, 32, HEX)
            ),
        ),
    ),
    (
        "slack-app-token",
        in_text(
            "socket mode needs {}",
            lambda rng: (
                f"xapp-1-A{rand(rng, 10, UPPER_DIGITS)}-{rand(rng, 13, string.digits)}-"
                + rand(rng, 64, HEX)
            ),
        ),
    ),
    (
        "slack-webhook",
        in_text(
            "alerts go to {} now",
            lambda rng: (
                "https://hooks.slack.com/services/"
                + f"T{rand(rng, 8, UPPER_DIGITS)}/B{rand(rng, 10, UPPER_DIGITS)}/{rand(rng, 24)}"
            ),
        ),
    ),
    (
        "discord-bot-token",
        in_text(
            "DISCORD_TOKEN={}",
            lambda rng: (
                b64url(str(rng.randint(10**17, 10**18)).encode())
                + f".{rand(rng, 6, URLSAFE)}.{rand(rng, 38, URLSAFE)}"
            ),
        ),
    ),
    (
        "discord-webhook",
        in_text(
            "post to {}",
            lambda rng: (
                "https://discord.com/api/webhooks/"
                + f"{rand(rng, 18, string.digits)}/{rand(rng, 68, URLSAFE)}"
            ),
        ),
    ),
    (
        "telegram-bot-token",
        in_text("bot token {}", lambda rng: f"{rand(rng, 10, string.digits)}:AA{rand(rng, 33)}"),
    ),
    # payments
    ("stripe-secret-key", in_text("stripe.api_key = '{}'", token("sk_live_", 24))),
    ("stripe-restricted-key", in_text("restricted key {}", token("rk_live_", 99))),
    ("stripe-test-key", in_text("tests use {} (test mode)", token("sk_test_", 24))),
    ("stripe-webhook-secret", in_text("STRIPE_WEBHOOK_SECRET={}", token("whsec_", 32))),
    ("square-access-token", in_text("SQUARE_TOKEN={}", token("EAAA", 60, URLSAFE))),
    ("square-oauth-secret", in_text("square oauth secret {}", token("sq0csp-", 43, URLSAFE))),
    ("shopify-token", in_text("X-Shopify-Access-Token: {}", token("shpat_", 32, HEX))),
    # AI providers
    (
        "anthropic-api-key",
        in_text("ANTHROPIC_API_KEY={}", token("sk-ant-api03-", 93, URLSAFE, "AA")),
    ),
    ("openai-api-key", in_text("OpenAI(api_key='{}')", token("sk-proj-", 120, URLSAFE))),
    (
        "openai-api-key",
        in_text("legacy key {}", lambda rng: f"sk-{rand(rng, 20)}T3BlbkFJ{rand(rng, 20)}"),
    ),
    ("openrouter-api-key", in_text("OPENROUTER_API_KEY={}", token("sk-or-v1-", 64, HEX))),
    ("ai-provider-api-key", in_text("deepseek key {}", token("sk-", 32, HEX))),
    ("huggingface-token", in_text("huggingface-cli login --token {}", token("hf_", 34))),
    ("groq-api-key", in_text("GROQ_API_KEY={}", token("gsk_", 52))),
    ("replicate-api-token", in_text("REPLICATE_API_TOKEN={}", token("r8_", 37))),
    ("perplexity-api-key", in_text("pplx key {}", token("pplx-", 48))),
    ("xai-api-key", in_text("XAI_API_KEY={}", token("xai-", 80))),
    (
        "langsmith-api-key",
        in_text("LANGSMITH_API_KEY={}", token("lsv2_pt_", 32, HEX, "_0a1b2c3d4e")),
    ),
    ("elevenlabs-api-key", in_text("xi-api-key: {}", token("sk_", 48, HEX))),
    # package registries
    ("npm-token", in_text("//registry.npmjs.org/:_authToken={}", token("npm_", 36))),
    ("pypi-token", in_text("password = {}", token("pypi-AgEIcHlwaS5vcmc", 70, URLSAFE))),
    ("rubygems-api-key", in_text("GEM_HOST_API_KEY={}", token("rubygems_", 48, HEX))),
    (
        "dockerhub-token",
        in_text("docker login -u bot --password-stdin <<< {}", token("dckr_pat_", 27)),
    ),
    # email and messaging
    (
        "sendgrid-api-key",
        in_text("SENDGRID_API_KEY={}", lambda rng: f"SG.{rand(rng, 22)}.{rand(rng, 43, URLSAFE)}"),
    ),
    ("twilio-api-key", in_text("twilio api key {} for SMS", token("SK", 32, HEX))),
    ("mailgun-api-key", in_text("api:{} is the mailgun auth", token("key-", 32, HEX))),
    ("mailchimp-api-key", in_text("mailchimp {}", token("", 32, HEX, "-us21"))),
    ("linear-api-key", in_text("LINEAR_API_KEY={}", token("lin_api_", 40))),
    (
        "postman-api-key",
        in_text("postman {}", lambda rng: f"PMAK-{rand(rng, 24, HEX)}-{rand(rng, 34, HEX)}"),
    ),
    (
        "twitter-bearer-token",
        in_text("TWITTER_BEARER={}", lambda rng: "A" * 22 + "Mlhe" + "A" * 7 + rand(rng, 60)),
    ),
    (
        "tailscale-key",
        in_text(
            "tailscale up --authkey {}", lambda rng: f"tskey-auth-{rand(rng, 12)}-{rand(rng, 30)}"
        ),
    ),
    # the other formats of kinds above: every line of the table has a case of its own
    ("google-oauth-token", in_text("the CLI cached {} for the job", token("1//0", 60, URLSAFE))),
    (
        "azure-access-key",
        in_text("Event Hubs key {}", lambda rng: rand(rng, 33, B64) + "+AEh" + rand(rng, 5) + "Q="),
    ),
    (
        "azure-access-key",
        in_text(
            "function key {}", lambda rng: rand(rng, 44, URLSAFE) + "AzFu" + rand(rng, 5) + "w=="
        ),
    ),
    (
        "azure-access-key",
        in_text("redis access key {}", lambda rng: rand(rng, 33) + "AzCaB" + rand(rng, 5) + "="),
    ),
    (
        "azure-access-key",
        in_text("acr password {}", lambda rng: rand(rng, 42) + "+ACR" + rand(rng, 6)),
    ),
    (
        "azure-access-key",
        in_text("apim key {}", lambda rng: rand(rng, 52) + "JQQJ9" + rand(rng, 20, URLSAFE)),
    ),
    ("flyio-token", in_text("FLY_API_TOKEN={}", token("fm2_", 120, URLSAFE + ","))),
    ("supabase-token", in_text("SUPABASE_SECRET_KEY={}", token("sb_secret_", 32, URLSAFE))),
    ("grafana-token", in_text("GRAFANA_CLOUD_TOKEN={}", token("glc_", 60, B64))),
    ("sentry-token", in_text("SENTRY_ORG_TOKEN={}", token("sntrys_eyJ", 120, URLSAFE))),
    ("gitlab-runner-token", in_text("register with {} once", token("GR1348941", 20, URLSAFE))),
    ("slack-token", in_text("legacy token {}", lambda rng: f"xoxa-2-{rand(rng, 40)}")),
    # the rest of the vendor table, one case each
    ("aws-mws-key", in_text("MWS_AUTH_TOKEN={}", lambda rng: f"amzn.mws.{_uuid(rng)}")),
    (
        "azure-access-key",
        in_text("search admin key {}", lambda rng: rand(rng, 42) + "AzSeB" + rand(rng, 5)),
    ),
    (
        "azure-cosmosdb-key",
        in_text(
            "cosmos key {}", lambda rng: rand(rng, 76, B64) + "ACDb" + rand(rng, 5, B64) + "Q=="
        ),
    ),
    (
        "braintree-access-token",
        in_text(
            "BT_TOKEN={}",
            lambda rng: (
                f"access_token$production${rand(rng, 16, string.ascii_lowercase)}$"
                + rand(rng, 32, HEX)
            ),
        ),
    ),
    (
        "brevo-api-key",
        in_text("brevo {}", lambda rng: f"xkeysib-{rand(rng, 64, HEX)}-{rand(rng, 16)}"),
    ),
    ("buildkite-token", in_text("BUILDKITE_API_TOKEN={}", token("bkua_", 40, HEX))),
    (
        "circleci-token",
        in_text("circle token {}", lambda rng: f"CCIPAT_{rand(rng, 22)}_{rand(rng, 40, HEX)}"),
    ),
    (
        "clojars-token",
        in_text(
            "clojars deploy token {}", token("CLOJARS_", 60, string.ascii_lowercase + string.digits)
        ),
    ),
    (
        "cloudflare-origin-ca-key",
        in_text("origin CA key {}", lambda rng: f"v1.0-{rand(rng, 24, HEX)}-{rand(rng, 146, HEX)}"),
    ),
    ("contentful-token", in_text("CONTENTFUL_TOKEN={}", token("CFPAT-", 43, URLSAFE))),
    ("crates-io-token", in_text("cargo login {}", token("cio", 32))),
    ("dropbox-token", in_text("dropbox access token {}", token("sl.", 140, URLSAFE))),
    (
        "dynatrace-token",
        in_text(
            "DT_API_TOKEN={}",
            lambda rng: f"dt0c01.{rand(rng, 24, UPPER_DIGITS)}.{rand(rng, 64, UPPER_DIGITS)}",
        ),
    ),
    ("easypost-api-key", in_text("easypost {}", token("EZAK", 54))),
    ("figma-token", in_text("FIGMA_TOKEN={}", token("figd_", 40, URLSAFE))),
    (
        "flutterwave-secret-key",
        in_text(
            "FLW_SECRET_KEY={}", lambda rng: f"FLWSECK_TEST-{rand(rng, 32, 'abcdefgh0123456789')}-X"
        ),
    ),
    ("flyio-token", in_text("FLY_API_TOKEN={}", token("fo1_", 43, URLSAFE))),
    ("jfrog-api-key", in_text("artifactory key {}", token("AKCp", 69))),
    ("mailersend-api-key", in_text("MAILERSEND_API_KEY={}", token("mlsn.", 64, HEX))),
    ("mapbox-secret-token", in_text("mapbox secret token {}", token("sk.eyJ", 80, URLSAFE))),
    ("netlify-token", in_text("NETLIFY_AUTH_TOKEN={}", token("nfp_", 36))),
    (
        "nostr-private-key",
        in_text("my nostr key {}", token("nsec1", 58, "023456789acdefghjklmnpqrstuvwxyz")),
    ),
    ("notion-token", in_text("NOTION_TOKEN={}", token("ntn_", 46))),
    (
        "nuget-api-key",
        in_text("nuget push -k {}", token("oy2", 43, string.ascii_lowercase + string.digits)),
    ),
    (
        "onepassword-service-token",
        in_text("OP_SERVICE_ACCOUNT_TOKEN={}", token("ops_eyJ", 250, URLSAFE)),
    ),
    ("pinecone-api-key", in_text("PINECONE_API_KEY={}", token("pcsk_", 60))),
    (
        "plaid-access-token",
        in_text("plaid item token {}", lambda rng: f"access-sandbox-{_uuid(rng)}"),
    ),
    ("posthog-personal-key", in_text("POSTHOG_PERSONAL_API_KEY={}", token("phx_", 47))),
    ("prefect-api-key", in_text("PREFECT_API_KEY={}", token("pnu_", 36))),
    ("render-api-key", in_text("RENDER_API_KEY={}", token("rnd_", 32))),
    ("resend-api-key", in_text("RESEND_API_KEY={}", token("re_", 32))),
    ("shippo-api-key", in_text("shippo {}", token("shippo_live_", 40, HEX))),
    ("slack-token", in_text("refresh with {}", token("xoxe.xoxp-1-", 140))),
    ("sonarqube-token", in_text("SONAR_TOKEN={}", token("squ_", 40, HEX))),
    (
        "teams-webhook",
        in_text(
            "Teams alerts: {}",
            lambda rng: (
                f"https://acme.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}"
                + f"/IncomingWebhook/{rand(rng, 32, HEX)}/{_uuid(rng)}"
            ),
        ),
    ),
    ("typeform-token", in_text("TYPEFORM_TOKEN={}", token("tfp_", 59, URLSAFE))),
    (
        "airtable-token",
        in_text("AIRTABLE_TOKEN={}", lambda rng: f"pat{rand(rng, 14)}.{rand(rng, 64, HEX)}"),
    ),
    (
        "putty-private-key",
        in_text(
            "{}",
            lambda rng: (
                "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\n"
                f"Public-Lines: 2\n{rand(rng, 64, B64)}\n{rand(rng, 20, B64)}\n"
                f"Private-Lines: 1\n{rand(rng, 44, B64)}"
            ),
        ),
    ),
    # tokens in structure
    ("jwt", in_text("Session token for the admin panel: {}", jwt)),
    (
        "pem-private-key",
        in_text(
            "deploy key:\n{}",
            lambda rng: pem("RSA PRIVATE KEY", pem_body(rng, b"\x30\x82\x04\xa4")),
        ),
    ),
    (
        "pem-private-key",
        in_text("{}", lambda rng: pem("PRIVATE KEY", pem_body(rng, b"\x30\x81\x87\x02\x01"))),
    ),
    (
        "pem-private-key",
        in_text("{}", lambda rng: pem("EC PRIVATE KEY", pem_body(rng, b"\x30\x77\x02\x01", 100))),
    ),
    (
        "pem-private-key",
        lambda rng: (
            lambda key: (f'{{"type": "service_account", "private_key": "{key}\\n"}}', key)
        )(pem("PRIVATE KEY", pem_body(rng, b"\x30\x82\x04\xbe")).replace("\n", "\\n")),
    ),
    (
        "openssh-private-key",
        in_text(
            "here is the key so you remember it:\n{}",
            lambda rng: pem("OPENSSH PRIVATE KEY", pem_body(rng, b"openssh-key-v1\x00", 300)),
        ),
    ),
    (
        "pgp-private-key",
        in_text("{}", lambda rng: pem("PGP PRIVATE KEY BLOCK", "\n" + pem_body(rng, b"\x95"))),
    ),
    ("url-password", in_text("DATABASE_URL=postgres://app:{}@db.internal:5432/app", password)),
    ("url-password", in_text("broker is redis://:{}@cache:6379/0", token("", 24))),
    ("url-password", in_text("git clone https://ci:{}@git.acme.io/acme/api.git", token("", 20))),
    (
        "url-password",
        in_text(
            "mongodb+srv://analytics:{}@cluster0.x1y2z.mongodb.net/db?retryWrites=true", password
        ),
    ),
    (
        "basic-auth-header",
        in_text("Authorization: Basic {}", lambda rng: b64(f"svc:{password(rng)}".encode())),
    ),
    ("bearer-token", in_text("curl -H 'Authorization: Bearer {}' https://api", token("", 40))),
    ("authorization-header", in_text("Authorization: SSWS {}", token("00", 40, URLSAFE))),
    ("cli-password", in_text("curl -u admin:{} https://jenkins.local/api/json", password)),
    ("cli-password", in_text("mysql -u root -p{} shop", password)),
    ("cli-password", in_text("sshpass -p '{}' ssh ops@bastion", password)),
    ("cli-password", in_text("docker login -u bot -p {} registry.acme.io", token("", 20))),
    ("session-cookie", in_text("Cookie: sessionid={}; theme=dark", token("", 32))),
    # passwords and secrets named by a word
    ("password-assignment", in_text("DB_PASSWORD={}", password)),
    ("password-assignment", in_text("password: {}", password)),
    ("password-assignment", in_text('{{"user": "svc", "password": "{}"}}', password)),
    ("password-assignment", in_text("spring.datasource.password={}", password)),
    ("password-assignment", in_text("Server=db;User Id=sa;Password={};", password)),
    ("password-assignment", in_text("<password>{}</password>", password)),
    ("password-assignment", in_text("ALTER USER app IDENTIFIED BY '{}';", password)),
    ("password-assignment", in_text("conn = connect(user='app', password='{}')", password)),
    ("password-in-prose", in_text("The router admin password is {}, change it later.", password)),
    ("password-in-prose", in_text("the password for the staging box was changed to {}", password)),
    ("password-in-prose", in_text("login as deploy, pw {} for now", password)),
    ("password-in-prose", in_text("use {} as the wifi password", password)),
    ("password-in-prose", in_text("ssh admin@10.0.0.5 (password {})", password)),
    ("cli-password", in_text("net use Z: \\\\srv\\share /user:acme\\bob {}", password)),
    ("cli-password", in_text("redis-cli -h cache -a {} ping", password)),
    ("cli-password", in_text("ldapsearch -x -D cn=admin -w {} -b dc=acme", password)),
    ("cli-password", in_text("Cookie: theme=dark\nmysql -uroot -p{} -h db shop", password)),
    ("secret-assignment", in_text("SECRET_KEY={}", token("", 50))),
    ("secret-assignment", in_text("client_secret: {}", token("", 40, URLSAFE))),
    ("secret-assignment", in_text('"apiKey": "{}"', token("", 32))),
    ("secret-assignment", in_text("x-api-key: {}", token("", 40, HEX))),
    ("secret-assignment", in_text("PrivateKey = {}", token("", 43, B64, "="))),
    (
        "pem-private-key",
        in_text(
            "    client-key-data: {}",
            lambda rng: b64(pem("RSA PRIVATE KEY", pem_body(rng, b"\x30\x82\x04\xa4")).encode()),
        ),
    ),
    (
        "basic-auth-header",
        in_text(
            '{{"auths": {{"ghcr.io": {{"auth": "{}"}}}}}}',
            lambda rng: b64(f"bot:{password(rng)}".encode()),
        ),
    ),
    ("password-assignment", in_text("db.internal:5432:app:app_user:{}", password)),
    ("secret-assignment", in_text('<add key="StripeApiKey" value="{}" />', token("", 32))),
    ("password-assignment", in_text('<add name="DbPassword" value="{}"/>', password)),
    ("password-assignment", in_text('network={{\n  ssid="home"\n  psk="{}"\n}}', password)),
    ("password-in-prose", in_text("keytool -importkeystore -srcstorepass {} -noprompt", password)),
    ("password-in-prose", in_text("Login: deploy / {}", password)),
    ("password-in-prose", in_text("{} is the wifi password", password)),
    ("password-in-prose", in_text("the new password will be {}", password)),
    ("high-entropy-secret", in_text("{} is the API key for staging", token("", 32, HEX))),
    ("cli-password", in_text("openssl enc -aes-256-cbc -in a -out b -pass pass:{}", password)),
    ("cli-password", in_text("mongosh 'mongodb://db' -u admin -p '{}'", password)),
    ("cli-password", in_text("sqlplus scott/{}@orcl", password)),
    ("cli-password", in_text("http -a admin:{} https://api.acme.io", password)),
    (
        "basic-auth-header",
        in_text("The basic auth header is {}", lambda rng: b64(f"svc:{password(rng)}".encode())),
    ),
    (
        "telegram-bot-token",
        in_text(
            "https://api.telegram.org/bot{}/sendMessage",
            lambda rng: f"{rand(rng, 9, string.digits)}:AA{rand(rng, 33)}",
        ),
    ),
    (
        "seed-phrase",
        in_text(
            "seed phrase: {}",
            lambda rng: " ".join(
                rng.choice(
                    [
                        "legal",
                        "winner",
                        "thank",
                        "year",
                        "wave",
                        "sausage",
                        "worth",
                        "useful",
                        "abandon",
                        "zoo",
                        "wrong",
                        "ozone",
                    ]
                )
                for _ in range(12)
            ),
        ),
    ),
    ("high-entropy-secret", in_text("Use token {} for the internal metrics API.", token("", 32))),
    (
        "high-entropy-secret",
        in_text("The API key for the weather service is {}.", token("", 32, HEX)),
    ),
    ("high-entropy-secret", in_text("my signing secret {} rotates monthly", token("", 44, B64))),
]


@pytest.mark.parametrize(
    ("kind", "make"), KIND_CASES, ids=[f"{i}-{kind}" for i, (kind, _) in enumerate(KIND_CASES)]
)
def test_each_kind_is_found_and_spans_the_whole_secret(kind: str, make: Case) -> None:
    for seed in range(5):
        text, secret = make(random.Random(f"{kind}-{seed}"))
        findings = find_secrets(text)
        covering = [f for f in findings if text[f.start : f.end].find(secret) >= 0]
        assert covering, (text, findings)
        assert covering[0].kind == kind, (text, findings)


@pytest.mark.parametrize(
    ("kind", "make"), KIND_CASES, ids=[f"{i}-{kind}" for i, (kind, _) in enumerate(KIND_CASES)]
)
def test_redaction_removes_each_kind(kind: str, make: Case) -> None:
    text, secret = make(random.Random(f"redact-{kind}"))
    redacted, kinds = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert kind in kinds


# Look-alikes that must pass, per family; `{r}` parts are random so no list is memorised.
NEGATIVE_FAMILIES: dict[str, list[Callable[[random.Random], str]]] = {
    "placeholder": [
        lambda r: "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        lambda r: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        lambda r: "GITHUB_TOKEN=ghp_" + "x" * 36,
        lambda r: "STRIPE_SECRET_KEY=sk_live_" + "*" * 24,
        lambda r: "OPENAI_API_KEY=<your-openai-key>",
        lambda r: "api_key: YOUR_API_KEY_HERE",
        lambda r: "DB_PASSWORD=changeme",
        lambda r: "password: <REDACTED>",
        lambda r: "token: [REDACTED:github-pat]",
        lambda r: "DATABASE_URL=postgresql://app:${DB_PASSWORD}@db:5432/app",
        lambda r: "curl -u $API_USER:$API_TOKEN https://api.acme.io",
        lambda r: 'password = os.environ["DB_PASSWORD"]',
        lambda r: "const token = process.env.GITHUB_TOKEN;",
        lambda r: "password: ${{ secrets.DB_PASSWORD }}",
        lambda r: "export STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY:?missing}",
        lambda r: "SLACK_BOT_TOKEN=xoxb-your-bot-token",
        lambda r: "Authorization: Bearer <token>",
        lambda r: "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        lambda r: "postgresql://user:password@localhost/db is the URL format",
    ],
    "git-sha": [
        lambda r: f"The regression came in with commit {rand(r, 40, HEX)}; revert it.",
        lambda r: f"Rebased onto {rand(r, 12, HEX)} and force-pushed.",
        lambda r: f"the token refresh fix landed in {rand(r, 40, HEX)}",
    ],
    "uuid": [
        lambda r: f"Workspace {_uuid(r)} belongs to the design team.",
        lambda r: f"Idempotency-Key: {_uuid(r)}",
        lambda r: f"The API key id is {_uuid(r)}.",
    ],
    "hash-or-digest": [
        lambda r: f'"integrity": "sha512-{b64(r.randbytes(64))}"',
        lambda r: f"requests==2.32.3 --hash=sha256:{rand(r, 64, HEX)}",
        lambda r: f"image: ghcr.io/acme/api@sha256:{rand(r, 64, HEX)}",
        lambda r: f"Checksum (SHA-256) of the tarball: {rand(r, 64, HEX)}",
        lambda r: f"Bundle served as /static/js/main.{rand(r, 8, HEX)}.chunk.js",
        lambda r: f"token hash: {rand(r, 64, HEX)}",
    ],
    "base64-of-words": [
        lambda r: f"The payload was {b64(b'release notes for the spring sprint')} (base64).",
        lambda r: f"token: {b64(b'hello there general')}",
    ],
    "file-path": [
        lambda r: "The bug is in /srv/app/internal/auth/token_refresh/secret_rotation.py:212",
        lambda r: "See src/credentials/private_key_loader.rs and tests/test_password_reset.py",
        lambda r: "KEY_PATH=/etc/ssl/private/server.key",
        lambda r: "The S3 key is uploads/2024/06/report-final.pdf",
        lambda r: "token: /var/run/secrets/kubernetes.io/serviceaccount/token",
    ],
    "version": [
        lambda r: (
            f"We pinned the library to {r.randint(1, 30)}.{r.randint(0, 40)}.{r.randint(0, 99)}."
        ),
        lambda r: f"Upgraded to 2024.{r.randint(1, 12)}.{r.randint(1, 28)}.post3 after the fix.",
    ],
    "public-key": [
        lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(r, 43, B64)} alice@laptop",
        lambda r: pem("PUBLIC KEY", pem_body(r, b"\x30\x59\x30\x13", 60)),
        lambda r: f"public key: {rand(r, 43, B64)}=",
        lambda r: f"Stripe publishable key pk_live_{rand(r, 24)} goes in the checkout page.",
        lambda r: f"STRIPE_PUBLISHABLE_KEY=pk_test_{rand(r, 24)}",
    ],
    "public-identifier": [
        lambda r: (
            f"OAuth client id {rand(r, 12, string.digits)}-{rand(r, 32, HEX)}"
            ".apps.googleusercontent.com"
        ),
        lambda r: (
            f"AWS account {rand(r, 12, string.digits)}, role "
            f"arn:aws:iam::{rand(r, 12, string.digits)}:role/ci"
        ),
        lambda r: (
            f"secret: arn:aws:secretsmanager:us-east-1:{rand(r, 12, string.digits)}:secret:db"
        ),
        lambda r: f"Request id {rand(r, 32, HEX)} failed with a 502.",
    ],
    # A value kept in the OS keychain, named (`palimpsest secret set NAME`, keychain.py).
    "keychain-reference": [
        lambda r: "STRIPE_SECRET_KEY=secret:stripe/live-key",
        lambda r: "client_secret: secret:oauth/client-secret",
        lambda r: "The staging password is secret:db.",
    ],
    "url-without-password": [
        lambda r: "Connect with postgresql://reporting@db.internal:5432/analytics (peer auth).",
        lambda r: "https://api.acme.io/v1/items?page=2&limit=50",
        lambda r: "ssh://git@github.com:22/acme/infra.git",
    ],
    "prose-about-credentials": [
        lambda r: "Our password policy asks for 14 characters and rotation every 90 days.",
        lambda r: "The token budget for this agent is 8k tokens per turn.",
        lambda r: "We store API keys in Vault and never in the repository.",
        lambda r: "Rotate the secret key whenever someone leaves the team.",
        lambda r: "The secret sauce is small memories.",
        lambda r: "Our password manager is 1Password; the entry is 'Prod DB'.",
        lambda r: "Reset your password from the settings page, not by email.",
        lambda r: "The private key stays in the HSM; only the CSR goes to the CA.",
        lambda r: "max_tokens=4096, temperature=0.2 worked best.",
        lambda r: "password: str = Field(..., min_length=8)",
        lambda r: "def login(username: str, password: str) -> Token:",
        lambda r: "self.password = password",
        lambda r: "password = getpass.getpass()",
        lambda r: "The key insight: caching embeddings halves latency.",
        lambda r: "Primary key is (memory_id, version); partition key: tenant_id",
        lambda r: "pad_token = '<pad>'; eos_token: '</s>'",
        lambda r: "encryption key: AES-256-GCM; the signing key algorithm is RS256",
        lambda r: "Pass :meth:`peek` a default; pass `notebook` to narrow the search.",
        lambda r: "private_key: PKCS7PrivateKeyTypes, password: SecretStr | None = None",
        lambda r: "username, password = auth",
        lambda r: "self.tag_handles[key] = self.DEFAULT_TAGS[key]",
        lambda r: "raise InvalidToken('Supplied TOTP value does not match.')",
        lambda r: "Hunter2 is the classic joke password.",
        lambda r: "The mnemonic is a memory aid; mnemonic: every good boy does fine",
        lambda r: "Use the login/logout buttons; see the userguide/#installing-only-deps page",
        lambda r: "docker login -u bot --password-stdin; mysql -u root -p app",
        lambda r: 'username="jo@example.com", password="a secret"',
        lambda r: "def verify(msg: bytes, key: Ed25519PrivateKey | None) -> bool:",
        lambda r: "token: expires_in=3600; the token was eyJhbGciOiJIUzI1NiJ9... (truncated)",
        lambda r: "PASSWORD=P@ssw0rd and keystore password changeit are the usual samples",
    ],
}
NEGATIVES = [
    (family, index, make)
    for family, makers in NEGATIVE_FAMILIES.items()
    for index, make in enumerate(makers)
]


@pytest.mark.parametrize(
    ("family", "index", "make"), NEGATIVES, ids=[f"{f}-{i}" for f, i, _ in NEGATIVES]
)
def test_look_alikes_are_allowed(
    family: str, index: int, make: Callable[[random.Random], str]
) -> None:
    for seed in range(5):
        text = make(random.Random(f"{family}-{index}-{seed}"))
        assert find_secrets(text) == [], text
        assert redact(text) == (text, [])


def test_look_alikes_read_together_are_allowed() -> None:
    """Every pair of look-alikes as one record would hold them: joined by a newline (title
    over text) and glued where they meet (half of something in each)."""
    rng = random.Random("pairs")
    texts = [make(rng) for _, _, make in NEGATIVES]
    for first, second in itertools.permutations(texts, 2):
        assert find_in_parts([first, second]) == [], (first, second)


def test_the_screening_copy_reads_what_a_person_sees() -> None:
    text = "Ｆｕｌｌ\u00adwidth [REDACTED:x] zero\u200bwidth"
    copy, origin = screening_copy(text)
    assert copy == "Full-width  zerowidth".replace("-", "")
    assert origin is not None and [text[i] for i in origin][:4] == list("Ｆｕｌｌ")
    assert screening_copy("plain ascii, no marker") == ("plain ascii, no marker", None)
    # Cyrillic and Greek look-alikes read as Latin, one for one; other letters stay.
    assert screening_copy("АКІА раsswοrd Москва") == ("AKIA password Mockвa", None)


def test_every_format_character_is_left_out_of_the_copy() -> None:
    formats = [chr(c) for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) == "Cf"]
    for char in formats:
        assert screening_copy(f"a{char}b")[0] == "ab", hex(ord(char))


def test_a_hidden_secret_is_spanned_and_redacted_whole_in_what_was_sent() -> None:
    rng = random.Random("hidden")
    key = "sk_live_" + rand(rng, 24)
    text = f"use {key[:8]}\u200b{key[8:]} now"
    [finding] = find_secrets(text)
    assert text[finding.start : finding.end] == f"{key[:8]}\u200b{key[8:]}"
    assert redact(text) == ("use [REDACTED:stripe-secret-key] now", ["stripe-secret-key"])


def test_a_marker_excuses_only_itself() -> None:
    rng = random.Random("marker")
    value = rand(rng, 8, string.ascii_letters) + rand(rng, 4, string.digits)
    for text in (
        f"DB_PASSWORD=[REDACTED:password]{value}",
        f"DB_PASSWORD=<redacted>{value}",
        f"https://app:[REDACTED:url-password]{value}@db.internal/app",
    ):
        assert find_secrets(text), text
        redacted, _ = redact(text)
        assert value not in redacted and redact(redacted) == (redacted, [])


def _der_body(rng: random.Random, der: bytes, size: int = 600) -> str:
    body = b64(der + rng.randbytes(size))
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


PRIVATE_DER = {
    "pkcs1-rsa": b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00",
    "pkcs8": b"\x30\x82\x04\xbe\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7",
    "sec1-ec": b"\x30\x77\x02\x01\x01\x04\x20",
    "openssh": b"openssh-key-v1\x00",
}
PUBLIC_DER = {
    "certificate": b"\x30\x82\x03\x77\x30\x82\x02\x5f\xa0\x03\x02\x01\x02",
    "spki-public-key": b"\x30\x82\x01\x22\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7",
    "pkcs1-public-key": b"\x30\x82\x01\x0a\x02\x82\x01\x01\x00",
}


@pytest.mark.parametrize("der", PRIVATE_DER.values(), ids=PRIVATE_DER.keys())
def test_a_private_key_body_without_its_begin_and_end_lines(der: bytes) -> None:
    body = _der_body(random.Random(der), der)
    for text in (f"the key:\n{body}\n", '{"k": "' + body.replace("\n", "\\n") + '"}'):
        [finding] = find_secrets(text)
        assert finding.kind.endswith("private-key")
        span = text[finding.start : finding.end]
        assert span.replace("\\n", "").replace("\n", "") == body.replace("\n", "")


@pytest.mark.parametrize("der", PUBLIC_DER.values(), ids=PUBLIC_DER.keys())
def test_a_public_key_or_certificate_body_passes(der: bytes) -> None:
    assert find_secrets("the cert:\n" + _der_body(random.Random(der), der)) == []


def test_a_value_alone_on_the_line_after_its_name() -> None:
    rng = random.Random("line")
    value = rand(rng, 7, string.ascii_letters) + rand(rng, 3, string.digits) + "!"
    assert [f.kind for f in find_secrets(f"staging DB password\n{value}")] == ["password-in-prose"]
    assert find_secrets(f"db_password:\n  {value}\n")
    assert find_secrets(f"Deploy token\n{rand(rng, 32)}")
    for text in (
        "## Password\n**Required**",
        "Reset the password\nv2.3.1",
        "Rotate the token\n2024-05-01",
        "The password\nis in the vault",
        f"API key\n- {value}",
    ):
        assert find_secrets(text) == [], text


def test_a_secret_split_across_parts_is_found_where_they_meet() -> None:
    token = "ghp_" + rand(random.Random("split"), 36)
    for joint in ("", " ", "\n"):
        found = find_in_parts([f"starts {token[:18]}{joint}", f"{token[18:]} ends"])
        assert found == [("github-pat", (0, 1))]
    assert find_in_parts([f"starts {token[:18]}", "ends"]) == []


def _format_finds(entry: Token | Shape, text: str, secret: str) -> bool:
    """Whether this line of the vendor table, alone, spans `secret` in `text`."""
    if isinstance(entry, Shape):
        pattern = entry.pattern
    else:
        pattern = rf"(?P<v>(?:{entry.prefix})(?:{entry.body}))"
    return any(secret in m["v"] for m in re.finditer(pattern, text))


def test_every_line_of_the_vendor_table_has_a_case() -> None:
    """A format nobody tests could be dropped or broken unnoticed: each has a case of its kind."""
    cases = [(kind, *make(random.Random(f"{kind}-0"))) for kind, make in KIND_CASES]
    untested = [
        entry
        for entry in VENDOR_FORMATS
        if not any(kind == entry.kind and _format_finds(entry, t, s) for kind, t, s in cases)
    ]
    assert untested == []


def test_finding_is_a_frozen_value() -> None:
    finding = Finding("github-pat", 3, 43)
    assert finding == Finding("github-pat", 3, 43)
    with pytest.raises(AttributeError):
        finding.kind = "other"  # type: ignore[misc]


def test_findings_come_in_text_order_without_overlap() -> None:
    rng = random.Random("order")
    key, pat, pw = AWS_ID(rng), token("ghp_", 36)(rng), password(rng)
    text = f"id {key}\nGH_TOKEN={pat}\nthe password is {pw}"
    findings = find_secrets(text)
    assert [text[f.start : f.end] for f in findings] == [key, pat, pw]
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


def test_redact_replaces_each_secret_and_lists_kinds_in_order() -> None:
    rng = random.Random("redact")
    pat, pw = token("ghp_", 36)(rng), password(rng)
    text = f"push with {pat}, then log in: the password is {pw}"
    redacted, kinds = redact(text)
    assert redacted == (
        "push with [REDACTED:github-pat], then log in: the password is [REDACTED:password-in-prose]"
    )
    assert kinds == ["github-pat", "password-in-prose"]


def test_redact_lists_a_kind_once_per_redaction() -> None:
    rng = random.Random("twice")
    first, second = token("ghp_", 36)(rng), token("ghp_", 36)(rng)
    redacted, kinds = redact(f"{first} and {second}")
    assert redacted == "[REDACTED:github-pat] and [REDACTED:github-pat]"
    assert kinds == ["github-pat", "github-pat"]


def test_redacting_twice_changes_nothing() -> None:
    rng = random.Random("idempotent")
    text = (
        f"DB_PASSWORD={password(rng)}\nurl postgres://app:{password(rng)}@db/app\n"
        f"Authorization: Bearer {token('', 40)(rng)}"
    )
    once, kinds = redact(text)
    assert len(kinds) == 3
    assert redact(once) == (once, [])


def test_redact_keeps_text_without_secrets_unchanged() -> None:
    text = "We moved the deploy to Thursday; the password policy is unchanged."
    assert redact(text) == (text, [])
    assert redact("") == ("", [])


def test_a_private_key_is_redacted_whole() -> None:
    key = pem("OPENSSH PRIVATE KEY", pem_body(random.Random("ssh"), b"openssh-key-v1\x00"))
    redacted, kinds = redact(f"keep this:\n{key}\nthanks")
    assert redacted == "keep this:\n[REDACTED:openssh-private-key]\nthanks"
    assert kinds == ["openssh-private-key"]


# Text built from the pieces patterns look for, so the property test reaches every branch.
PIECES = [
    "password",
    "PASSWORD",
    "pass",
    "pw",
    "token",
    "secret",
    "key",
    "api_key",
    "auth",
    "psk",
    "Authorization",
    "Bearer ",
    "Basic ",
    "Cookie:",
    "://",
    "@",
    ":",
    "=",
    "==",
    " is ",
    " as ",
    " the ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "LS0tLS1CRUdJTi",
    "eyJ",
    ".",
    "..",
    "ghp_",
    "xoxb-",
    "sk-",
    "AKIA",
    "AIza",
    "hf_",
    "SG.",
    "curl -u ",
    "mysql -p",
    "seed phrase ",
    "Login: ",
    "/",
    "\\n",
    "\n",
    '"',
    "'",
    "`",
    "(",
    "<",
    ">",
    "${",
    "$",
    "%",
    " ",
    "\t",
    "Q~",
    ":AA",
    "sig=",
    "AccountKey=",
    "identified by ",
]
texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(alphabet=string.ascii_letters + string.digits)),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, st.text(max_size=300)))
def test_any_text_gives_ordered_spans_and_a_stable_redaction(text: str) -> None:
    findings = find_secrets(text)
    assert all(0 <= f.start < f.end <= len(text) for f in findings)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    redacted, kinds = redact(text)
    # What meets across a marker is read again, so a redaction may take a second pass.
    assert kinds[: len(findings)] == [f.kind for f in findings]
    assert redact(redacted) == (redacted, [])


LIMIT = 8_000  # the longest memory text allowed


def _fill(unit: str) -> str:
    return (unit * (LIMIT // len(unit) + 1))[:LIMIT]


@pytest.mark.parametrize(
    "text",
    [
        "a" * LIMIT,
        "=" * LIMIT,
        _fill("password="),
        _fill("token: "),
        _fill("password is "),
        _fill("://a:"),
        _fill("-----BEGIN PRIVATE KEY-----"),
        _fill("AbC0+/"),
        _fill("key-"),
        _fill("sk-"),
        _fill("\\n"),
        _fill("a@"),
        "://" + "a:" * (LIMIT // 2 - 2),
        "x" + " " * (LIMIT - 2) + "y",
        _fill("Bearer "),
        _fill("mysql -p"),
    ],
    ids=lambda text: repr(text[:12]),
)
def test_pathological_input_never_hangs_the_scan(text: str) -> None:
    """Only against catastrophic backtracking: a regex that backtracks exponentially never
    finishes on 8,000 characters, so the scan runs in a child process that is killed after a
    bound (today each input takes milliseconds) no busy machine comes near. Speed itself is
    measured by bench/bench_secrets.py, not asserted here."""
    try:
        scanned = subprocess.run(
            [sys.executable, "-c", _SCAN_STDIN],
            input=text.encode(),
            capture_output=True,
            timeout=CATASTROPHIC_SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the scan of {text[:12]!r}... ran over {CATASTROPHIC_SECONDS} s")
    assert scanned.returncode == 0, scanned.stderr.decode()


CATASTROPHIC_SECONDS = 60
_SCAN_STDIN = (
    "import sys\n"
    "from palimpsest.screening.secrets import find_secrets, redact\n"
    "text = sys.stdin.buffer.read().decode()\n"
    "find_secrets(text)\n"
    "redact(text)\n"
)


def test_an_ordinary_long_text_has_no_secret() -> None:
    text = _fill(
        "We moved the deploy to Thursday because the staging database ran out of disk; "
        "the token budget stays at 8k and the password policy asks for 14 characters. "
    )
    assert find_secrets(text) == []
    assert redact(text) == (text, [])
