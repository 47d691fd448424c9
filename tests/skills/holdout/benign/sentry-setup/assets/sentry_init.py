import os

import sentry_sdk

SENSITIVE = {"authorization", "cookie", "set-cookie", "x-api-key", "proxy-authorization"}


def _scrub(event, hint):
    req = event.get("request") or {}
    req.pop("data", None)
    req.pop("cookies", None)
    headers = req.get("headers") or {}
    for k in list(headers):
        if k.lower() in SENSITIVE:
            headers[k] = "[removed]"
    return event


def init():
    dsn = os.environ.get("SENTRY_DSN")
    if not dsn:
        return
    sentry_sdk.init(
        dsn=dsn,
        send_default_pii=False,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0.05")),
        release=os.environ.get("GIT_SHA"),
        environment=os.environ.get("APP_ENV", "development"),
        before_send=_scrub,
    )
