const Sentry = require("@sentry/node");

const SENSITIVE = new Set(["authorization", "cookie", "set-cookie", "x-api-key"]);

if (process.env.SENTRY_DSN) {
  Sentry.init({
    dsn: process.env.SENTRY_DSN,
    sendDefaultPii: false,
    tracesSampleRate: Number(process.env.SENTRY_TRACES_SAMPLE_RATE ?? 0.05),
    release: process.env.GIT_SHA,
    beforeSend(event) {
      if (event.request) {
        delete event.request.data;
        delete event.request.cookies;
        for (const k of Object.keys(event.request.headers ?? {})) {
          if (SENSITIVE.has(k.toLowerCase())) event.request.headers[k] = "[removed]";
        }
      }
      return event;
    },
  });
}
