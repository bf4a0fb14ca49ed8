"""Making the HTML book: merging each section's notebooks into a page, assembling the
site, the Sphinx extension, the Execution report, the README's screenshot.
"""
