"""`contractlang view`: the viewer's data (games, tables, figures under a path) and its page, served or bundled."""
