"""The stages that scan, eval, fix, sweep and bench compose:
generate -> execute -> score -> attribute -> render."""
