"""``dmlsim.genai``: generate text with a language model built for DirectML by
onnxruntime-genai's model builder, off Windows, through DML operators (``dmlsim.onnx``), with
onnxruntime-genai's API shape (``Model``, ``Tokenizer``, ``GeneratorParams``,
``Generator.append_tokens`` / ``generate_next_token`` / ``get_next_tokens`` / ``is_done``).
``dmlsim generate MODEL_DIR --prompt "..."`` streams tokens from the command line. Needs the
``onnx`` and ``tokenizers`` packages (``pip install dmlsim[genai]``)."""
from ._pythonic.genai import (  # noqa: F401
    Config, Generator, GeneratorParams, Model, Tokenizer, TokenizerStream, step_feeds)
