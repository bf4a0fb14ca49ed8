"""Reading the book's sources: sections and their authoring rules, MyST for Jupyter,
the split into one notebook per framework, the install cell, quoted values, #@save.
"""
