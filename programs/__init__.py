"""The example programs and their data (`.dl`, `.dat`), shipped inside the package as
`ddlog.programs` so that an installed `ddlog demo` finds them."""
