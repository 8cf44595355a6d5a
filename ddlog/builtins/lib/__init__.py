"""DDlog's libraries written in the dialect itself (`regex.dl`, `url.dl`): a program's
`import regex` or `import url` finds them after its own directory and the `-L` roots
(ddlog/builtins/prelude.py names the folder). No Python here."""
