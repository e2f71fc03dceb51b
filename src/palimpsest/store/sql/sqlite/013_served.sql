-- What each session was shown (issue 32: "what did the agent know when it did that?"): one
-- row per serving (a recall, orient, the session-start brief, an inspect), with the ids,
-- versions and scores of what was shown as JSON, never the memories' text; the request's
-- filters, its query redacted. Bounded in age by the service (`served.keep_days`); a
-- forget deletes a session's rows (secure_delete zeroes their bytes). Not copied.
CREATE TABLE served (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    session     TEXT NOT NULL,
    actor       TEXT NOT NULL,
    key_id      TEXT,
    served_at   TEXT NOT NULL,
    what        TEXT NOT NULL,
    request     TEXT NOT NULL,
    shown       TEXT NOT NULL
);
CREATE INDEX served_session ON served(workspace, session, served_at);
CREATE INDEX served_at ON served(workspace, served_at);
