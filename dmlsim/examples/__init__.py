"""Programs written the way a DirectML application is, installed with the package so that
``dmlsim hello`` runs them from any install: ``hello_directml`` is microsoft/DirectML's
HelloDirectML sample, ported line by line (``examples/hello_directml.py`` in a checkout runs it)."""
