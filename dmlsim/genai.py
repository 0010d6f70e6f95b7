"""``dmlsim.genai``: generate text with a language model built for DirectML by
onnxruntime-genai's model builder, off Windows, through DML operators (``dmlsim.onnx``), with
onnxruntime-genai's API shape (``Model``, ``Tokenizer``, ``GeneratorParams``,
``Generator.append_tokens`` / ``generate_next_token`` / ``get_next_tokens`` / ``is_done``).
``dmlsim generate MODEL_DIR --prompt "..."`` streams tokens from the command line. A Whisper
folder (type "whisper": an encoder and a decoder) transcribes log-mel frames given with
``Generator.set_inputs({"audio_features": mel, "input_ids": prompt})``. Needs the
``onnx`` and ``tokenizers`` packages (``pip install dmlsim[genai]``)."""
from ._pythonic.genai import (  # noqa: F401
    WHISPER_PROMPT, Config, Generator, GeneratorParams, Model, Tokenizer, TokenizerStream,
    step_feeds)
