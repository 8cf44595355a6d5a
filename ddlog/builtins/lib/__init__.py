"""DDlog's libraries written in the dialect itself (`regex.dl`): a program's `import regex`
finds them after its own directory and the `-L` roots (ddlog/builtins/prelude.py names the
folder). No Python here."""
