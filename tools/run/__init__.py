"""Running the notebooks: the execute step, one kernel each, the content-hash cache,
clean outputs and the execution records.
"""
