"""The single place where specdyn's version is written."""

__version__ = "0.1.0"
