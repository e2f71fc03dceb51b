-- Who is signed in to the web page with a key (issue 32), shared by every process serving
-- the store, so that a cookie made by one is known to the next behind a load balancer and
-- a sign-out or a revocation ends it on all of them. A row names its session by the
-- sha256 of the cookie, never the cookie, and its key by id, never the key: nothing here
-- can be presented to sign in. The form token is derived from the cookie (web/sessions.py)
-- and not stored. Each key holds a bounded number (`http.web_sessions_per_key`); a
-- revocation or a user's removal deletes its key's rows in the same transaction; idle rows
-- are pruned. Not copied, not exported: a session belongs to the store it was opened on.
CREATE TABLE web_sessions (
    cookie_hash TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    key_id      TEXT NOT NULL REFERENCES access_keys(id),
    created_at  TEXT NOT NULL,
    used_at     TEXT NOT NULL
);
CREATE INDEX web_sessions_key ON web_sessions(key_id, used_at);
CREATE INDEX web_sessions_used ON web_sessions(workspace, used_at);
