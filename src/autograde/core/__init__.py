"""Foundations: errors, ids and hashing, logging and progress, runtime (threads, GPU), statistics, tables, text files and YAML, the results and cache layout. Imports nothing else of autograde."""
