"""The language server (`contractlang lsp`): pure editor features over the project's parser and checker.

`analysis`, `hover`, `completion`, `symbols`, `actions` and `verification` take source text (or its analysis)
and a position and return typed results; `server` is the only module that speaks the protocol (pygls).
"""
