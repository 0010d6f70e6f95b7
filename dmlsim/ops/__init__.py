"""Operator modules, one per operator or family table; discovered by the registry."""
