"""Running the notebooks: the execute step and its settings, one kernel each, the
content-hash cache, clean outputs and the execution records.
"""
