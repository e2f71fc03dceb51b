"""Recall measured on questions with known answers: `palimpsest bench recall` on a user's
own store (`bench`), the shipped project dev set (`devset`) and LoCoMo (`locomo`).
Clients of the service, as the adapters are."""
