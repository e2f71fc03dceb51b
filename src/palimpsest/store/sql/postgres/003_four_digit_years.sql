-- Before this release a time in a year before 1000 was written without zero padding
-- ('999-06-01T...'), so it sorted after every later year as text: an expiry in 900 never
-- passed and since/until mis-ordered. Pad every such year to four digits. The year is
-- what comes before the first '-': one to three digits here, four in a correct time.
-- (Event times and other clock-made times were never before 1000; a revert's `as_of`
-- before 1000 reverted nothing then, so no event data holds one.)

UPDATE memory_versions
    SET occurred_at = lpad(split_part(occurred_at, '-', 1), 4, '0') || substr(occurred_at, strpos(occurred_at, '-'))
    WHERE strpos(occurred_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET recorded_at = lpad(split_part(recorded_at, '-', 1), 4, '0') || substr(recorded_at, strpos(recorded_at, '-'))
    WHERE strpos(recorded_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET expires_at = lpad(split_part(expires_at, '-', 1), 4, '0') || substr(expires_at, strpos(expires_at, '-'))
    WHERE strpos(expires_at, '-') BETWEEN 2 AND 4;

UPDATE memory_versions
    SET verified_at = lpad(split_part(verified_at, '-', 1), 4, '0') || substr(verified_at, strpos(verified_at, '-'))
    WHERE strpos(verified_at, '-') BETWEEN 2 AND 4;
