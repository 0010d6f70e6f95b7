"""Pythonic conveniences for notebooks, built only from the public faithful layer."""
