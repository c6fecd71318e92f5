"""Pegboard's kernel: private implementation modules behind the public ``pegboard`` API."""
