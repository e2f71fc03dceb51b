-- Which secret detector last read a version and found nothing (doctor's mark, derived:
-- a copy leaves it behind, and a new detector reads every version again).
ALTER TABLE memory_versions ADD COLUMN screened TEXT;
