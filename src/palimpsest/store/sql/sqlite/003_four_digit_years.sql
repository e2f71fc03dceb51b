-- Before this release a time in a year before 1000 was written without zero padding
-- ('999-06-01T...'), so it sorted after every later year as text: an expiry in 900 never
-- passed and since/until mis-ordered. Pad every such year to four digits. The year is
-- what comes before the first '-': one to three digits here, four in a correct time.
-- (Event times and other clock-made times were never before 1000; a revert's `as_of`
-- before 1000 reverted nothing then, so no event data holds one.)

UPDATE memory_versions
    SET occurred_at = printf('%04d', substr(occurred_at, 1, instr(occurred_at, '-') - 1))
        || substr(occurred_at, instr(occurred_at, '-'))
    WHERE instr(occurred_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET recorded_at = printf('%04d', substr(recorded_at, 1, instr(recorded_at, '-') - 1))
        || substr(recorded_at, instr(recorded_at, '-'))
    WHERE instr(recorded_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET expires_at = printf('%04d', substr(expires_at, 1, instr(expires_at, '-') - 1))
        || substr(expires_at, instr(expires_at, '-'))
    WHERE instr(expires_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET verified_at = printf('%04d', substr(verified_at, 1, instr(verified_at, '-') - 1))
        || substr(verified_at, instr(verified_at, '-'))
    WHERE instr(verified_at, '-') BETWEEN 2 AND 4;
