"""The faithful layer: COM-shaped shells over the core, named and shaped as in the C headers."""
