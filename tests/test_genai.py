"""dmlsim.genai: the tiny language models built for DirectML by onnxruntime-genai's builder
(tests/models/genai, tools/make_tiny_llm.py: llama- and qwen2-style, fp16 and int4) generate
the same greedy tokens as onnxruntime-genai on its CPU provider running the same folder;
sampling is reproducible; the tokenizer agrees with onnxruntime-genai's; misuse is named."""
import functools
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml
import dmlsim.genai as genai
from dmlsim import cli

og = pytest.importorskip("onnxruntime_genai")

GENAI = Path(__file__).resolve().parent / "models" / "genai"
FOLDERS = ["llama-fp16", "llama-int4", "qwen2-fp16", "qwen2-int4"]
PROMPT = "DirectML runs"


@functools.lru_cache(maxsize=None)
def _model(folder):
    """One Model per folder for the whole module: its plans are compiled once."""
    return genai.Model(GENAI / folder)


def _ours(folder, max_length, **options):
    model = _model(folder) if options.get("past_present_share_buffer", True) else \
        genai.Model(GENAI / folder)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=max_length, **options)
    generator = genai.Generator(model, params)
    generator.append_tokens(genai.Tokenizer(model).encode(PROMPT))
    while not generator.is_done():
        generator.generate_next_token()
    return generator, model


def _theirs(folder, max_length):
    config = og.Config(str(GENAI / folder))
    config.clear_providers()
    model = og.Model(config)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=max_length, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(og.Tokenizer(model).encode(PROMPT))
    while not generator.is_done():
        generator.generate_next_token()
    return np.asarray(generator.get_sequence(0))


@pytest.mark.parametrize("folder", FOLDERS)
def test_32_greedy_tokens_are_onnxruntime_genais(folder):
    prompt = len(genai.Tokenizer(_model(folder)).encode(PROMPT))
    before = _model(folder).session.plan_cache_info()
    generator, model = _ours(folder, prompt + 32)
    ours = generator.get_sequence(0)
    theirs = _theirs(folder, prompt + 32)
    assert len(ours) == prompt + 32
    np.testing.assert_array_equal(ours, theirs)
    # the static KV buffer and attention mask: one plan for the prompt, one for every decode
    after = model.session.plan_cache_info()
    assert after.misses - before.misses <= 2 and after.hits - before.hits >= 30


def test_a_growing_cache_gives_the_same_tokens():
    """past_present_share_buffer off: the KV cache grows a step at a time, a plan per length,
    and the tokens are onnxruntime-genai's (which the shared buffer's are too, above)."""
    generator, model = _ours("llama-fp16", 6, past_present_share_buffer=False)
    np.testing.assert_array_equal(generator.get_sequence(0), _theirs("llama-fp16", 6))
    assert model.session.plan_cache_info().misses == 3  # one per length: the cache grows


def test_sampling_is_reproducible_and_top_k_1_is_greedy():
    a, _ = _ours("llama-int4", 20, do_sample=True, random_seed=7, temperature=1.5)
    b, _ = _ours("llama-int4", 20, do_sample=True, random_seed=7, temperature=1.5)
    c, _ = _ours("llama-int4", 20, do_sample=True, random_seed=8, temperature=1.5)
    np.testing.assert_array_equal(a.get_sequence(0), b.get_sequence(0))
    assert not np.array_equal(a.get_sequence(0), c.get_sequence(0))
    top1, _ = _ours("llama-int4", 20, do_sample=True, random_seed=3, top_k=1)
    greedy, _ = _ours("llama-int4", 20)
    np.testing.assert_array_equal(top1.get_sequence(0), greedy.get_sequence(0))


def test_search_selection_rules():
    from dmlsim._pythonic.genai_search import select
    logits = np.array([[1.0, 3.0, 2.0, -1.0]], np.float32)
    seq = np.array([[1]])
    rng = np.random.default_rng(0)
    assert select(logits, seq, {}, [0], rng).tolist() == [1]
    # repetition penalty: a seen positive logit is divided (3 / 2 = 1.5 < 2)
    assert select(logits, seq, {"repetition_penalty": 2.0}, [0], rng).tolist() == [2]
    # min_length keeps the end-of-sequence token out
    assert select(np.array([[9.0, 1.0]]), seq, {"min_length": 5}, [0], rng).tolist() == [1]
    # top_p 0.5 keeps only the most likely token
    draws = {int(select(logits, seq, {"do_sample": True, "top_p": 0.5}, [0], rng)[0])
             for _ in range(20)}
    assert draws == {1}


def test_the_tokenizer_agrees_with_onnxruntime_genais():
    model = _model("llama-fp16")
    ours = genai.Tokenizer(model)
    config = og.Config(str(GENAI / "llama-fp16"))
    config.clear_providers()
    theirs = og.Tokenizer(og.Model(config))
    for text in (PROMPT, "The quick brown fox jumps over the lazy dog.", "dmlsim, anywhere!"):
        ids = ours.encode(text)
        np.testing.assert_array_equal(ids, theirs.encode(text))
        assert ours.decode(ids) == text
        stream = ours.create_stream()
        assert "".join(stream.decode(t) for t in ids) == text


def test_generate_on_the_command_line_streams_tokens_and_reports_speed(capsys):
    assert cli.main(["generate", str(GENAI / "llama-fp16"), "--prompt", PROMPT,
                     "--max-length", "12"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(PROMPT)
    assert out[-1].startswith("prefill: 3 tokens in ") and "decode: 8 tokens in" in out[-1]
    assert cli.main(["generate", str(GENAI / "nowhere"), "--prompt", "x"]) == 1
    assert "no genai_config.json in" in capsys.readouterr().err


@pytest.mark.parametrize("options, hr, words", [
    ({"max_length": 0}, dml.E_INVALIDARG, "max_length is 0"),
    ({"max_length": 2.5}, dml.E_INVALIDARG, "max_length is 2.5"),
    ({"top_p": 0.0}, dml.E_INVALIDARG, "top_p is 0.0"),
    ({"do_sample": 1}, dml.E_INVALIDARG, "do_sample is 1"),
    ({"num_beams": 4}, dml.E_NOTIMPL, "beam search is not implemented"),
    ({"beams": 4}, dml.E_INVALIDARG, "unknown search option 'beams'"),
])
def test_search_options_are_checked(options, hr, words):
    params = genai.GeneratorParams(_model("llama-fp16"))
    with pytest.raises(dml.HResultError) as e:
        params.set_search_options(**options)
    assert e.value.hresult == hr and words in e.value.message


def test_generator_misuse_is_named():
    model = _model("llama-fp16")
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=4)
    generator = genai.Generator(model, params)
    with pytest.raises(dml.HResultError) as e:
        generator.generate_next_token()
    assert "append tokens first" in e.value.message
    with pytest.raises(dml.HResultError):
        generator.append_tokens(np.array([1.5]))
    generator.append_tokens(np.array([0, 5, 7], np.int32))
    generator.generate_next_token()
    assert generator.is_done()  # 3 + 1 = max_length
    with pytest.raises(dml.HResultError) as e:
        generator.generate_next_token()
    assert "the generator is done" in e.value.message
    assert generator.get_output("logits").shape == (1, 3, 320)
