-- Agent sessions: where a coding agent's session began (the last event sequence when its
-- session-start hook ran), so that its session-end hook lists what was written since, and
-- whether that hook has asked the agent, once, to file what it learned. Bookkeeping of the
-- hooks, not memory: no event, not copied, pruned after 30 days.
CREATE TABLE agent_sessions (
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    session_id  TEXT NOT NULL,
    notebook_id TEXT,
    started_seq BIGINT NOT NULL,
    started_at  TEXT NOT NULL,
    asked_at    TEXT,
    PRIMARY KEY (workspace, session_id)
);
CREATE INDEX agent_sessions_started ON agent_sessions(workspace, started_at);
-- Usefulness marks (revise's `feedback`) are events that make no version: counted from
-- the events, through this index, for recall's and orient's ranking and doctor's noise.
CREATE INDEX events_feedback ON events(workspace, target_id) WHERE op = 'feedback';
