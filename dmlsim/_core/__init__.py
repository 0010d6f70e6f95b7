"""dmlsim core: memory, tensor views, operator registry, validation, programs, queues.

The core never imports the faithful API layer (``dmlsim._api``); a test enforces it.
"""
