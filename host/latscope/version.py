"""latscope's version, in a module of its own: the results documents name it, and the report
layer cannot import the package's top (which imports the API above it)."""

__version__ = "0.1.0"
