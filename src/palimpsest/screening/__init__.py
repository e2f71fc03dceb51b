"""What keeps secrets and unstorable text out: the write gate (`gate`), the secret
detector (`secrets`) and its rules as data (`secret_rules`)."""
