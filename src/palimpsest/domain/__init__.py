"""The domain: what a memory is (model, ids), how it is shown (views, text), the errors
every layer answers with, and the rules that read files (checks, projects). It imports
nothing of the store, the service or a transport."""
