"""Test bank files: the data model, the readers and writers of every bank format, strict reading for the workflow."""
