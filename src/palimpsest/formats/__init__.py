"""Files Palimpsest reads and writes: its own export format, other memory servers'
files, and markdown for people.

A reader of another server's files turns them into `records`: memories in remember's
fields, links between them, and what could not be mapped, each saying where in the
source it came from. The service files them (service/transfer.py); a reader never
touches a store.
"""
