"""Schema layer: C-shaped structs, unions, enums and the operator table.

Neutral ground shared by the core and the faithful API; it imports neither.
"""
