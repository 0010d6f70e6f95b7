"""dmlsim.genai with a Whisper folder built for DirectML by onnxruntime-genai's builder
(tests/models/genai/whisper-fp16, tools/make_tiny_whisper.py): 30 s of log-mel frames through
the encoder, then the decoder's greedy loop over its growing self-attention cache and the
encoder's cross-attention keys and values, gives onnxruntime-genai's tokens on its CPU provider
running the same folder; misuse is named; ``dmlsim generate`` transcribes from the command line.

A decoder step on a growing cache has new shapes each time, so each one is lowered and compiled
anew (about 2 s on two CPU cores; JAX's persistent compilation cache, off in the tests, keeps
them for the next process): the tests generate a few tokens, not hundreds."""
import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml
import dmlsim.genai as genai
from dmlsim import cli

og = pytest.importorskip("onnxruntime_genai")

FOLDER = Path(__file__).resolve().parent / "models" / "genai" / "whisper-fp16"
MEL = np.random.default_rng(0).standard_normal((1, 80, 3000)).astype(np.float16)
LENGTH = 4 + 4  # the decoder prompt and four tokens


@functools.lru_cache(maxsize=None)
def _model():
    return genai.Model(FOLDER)


def _generator(max_length=LENGTH):
    params = genai.GeneratorParams(_model())
    params.set_search_options(max_length=max_length)
    return genai.Generator(_model(), params)


def test_the_folder_is_a_whisper_model():
    model = _model()
    assert model.type == "whisper" and model.encoder is not None
    assert [a.name for a in model.encoder.get_inputs()] == ["audio_features"]
    assert model.config.inputs["cross_past_key_names"] == "past_key_cross_%d"


def test_greedy_transcription_is_onnxruntime_genais(tmp_path):
    prompt = genai.Tokenizer(_model()).encode(genai.WHISPER_PROMPT)
    np.testing.assert_array_equal(prompt, [1, 2, 3, 4])  # the special tokens, as trained
    ours = _generator()
    ours.set_inputs({"audio_features": MEL, "input_ids": prompt[None]})
    while not ours.is_done():
        ours.generate_next_token()
    assert ours.get_output("logits").shape == (1, 1, 300)

    cpu = tmp_path / "whisper"  # onnxruntime-genai's CPU build refuses the folder's DML options
    shutil.copytree(FOLDER, cpu)
    config = json.loads((cpu / "genai_config.json").read_text())
    for part in ("encoder", "decoder"):
        config["model"][part]["session_options"]["provider_options"] = []
    (cpu / "genai_config.json").write_text(json.dumps(config))
    model = og.Model(og.Config(str(cpu)))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=LENGTH, do_sample=False)
    theirs = og.Generator(model, params)
    inputs = og.NamedTensors()
    inputs["audio_features"] = MEL
    inputs["input_ids"] = prompt[None].astype(np.int32)
    theirs.set_inputs(inputs)
    while not theirs.is_done():
        theirs.generate_next_token()
    assert len(ours.get_sequence(0)) == LENGTH
    np.testing.assert_array_equal(ours.get_sequence(0), theirs.get_sequence(0))
    assert set(ours.timings) == {"encode", "prefill", "decode"}


def test_whisper_misuse_is_named():
    g = _generator()
    with pytest.raises(dml.HResultError) as e:
        g.append_tokens(np.array([1, 2], np.int32))  # the decoder needs the encoder's output
    assert e.value.hresult == dml.E_INVALIDARG and "set_inputs({'audio_features'" in \
        e.value.message
    for inputs, words in (({"audio": MEL}, "no input audio for a 'whisper' model"),
                          ({"audio_features": MEL[0]}, "audio_features is float16 [80, 3000]"),
                          ({"audio_features": MEL.astype(np.int32)}, "audio_features is int32"),
                          ([MEL], "inputs is a list")):
        with pytest.raises(dml.HResultError) as e:
            g.set_inputs(inputs)
        assert e.value.hresult == dml.E_INVALIDARG and words in e.value.message
    with pytest.raises(dml.HResultError) as e:  # checked before the encoder runs
        g.set_inputs({"audio_features": MEL, "input_ids": np.array([[1.5]])})
    assert "Generator.set_inputs: tokens must be" in e.value.message and "encode" not in g.timings
    g.set_inputs({"audio_features": MEL, "input_ids": np.array([[1, 2, 3, 4]], np.int32)})
    with pytest.raises(dml.HResultError) as e:
        g.set_inputs({"audio_features": MEL})
    assert "audio_features after tokens" in e.value.message


def test_a_language_model_takes_no_audio():
    llm = genai.Model(FOLDER.parent / "llama-int4")
    with pytest.raises(dml.HResultError) as e:
        genai.Generator(llm, genai.GeneratorParams(llm)).set_inputs({"audio_features": MEL})
    assert "no input audio_features for a 'llama' model (it takes input_ids)" in e.value.message


def test_generate_transcribes_on_the_command_line(tmp_path, capsys):
    np.save(tmp_path / "mel.npy", MEL.astype(np.float32))
    assert cli.main(["generate", str(FOLDER), "--audio-features", str(tmp_path / "mel.npy"),
                     "--max-length", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"(decoder prompt {genai.WHISPER_PROMPT})"
    assert out[-1].startswith("prefill: 4 tokens in ") and "decode: 0 tokens in" in out[-1]
    assert cli.main(["generate", str(FOLDER)]) == 1
    assert "needs --audio-features" in capsys.readouterr().err
    assert cli.main(["generate", str(FOLDER), "--audio-features", str(tmp_path / "no.npy")]) \
        == 2  # a usage error
    assert "no such file" in capsys.readouterr().err
