"""Helpers shared by test modules (test modules never import one another)."""
