"""Readers and writers for every input and output format."""
