"""A Stable-Diffusion-style image from a folder laid out as Olive's DirectML sample writes it
(``unet/model.onnx``, ``vae_decoder/model.onnx``, ``scheduler/scheduler_config.json``): DDIM
denoising steps through the UNet, then the VAE decoder, every model through DML operators
(``dmlsim.onnx``). The repo's folder is ``tests/models/diffusion/optimized/tiny-sd``: random
weights, FLOAT16, fused by ONNX Runtime's transformer optimizer with the DirectML sample's
options (GroupNorm, Gelu); ``tools/make_tiny_diffusion.py`` made it and its unoptimized FLOAT
twin. The text encoder is left out: the prompt's embedding is given (``context``).

    python examples/tiny_diffusion.py [FOLDER] [--steps 4] [--png out.png]
"""
import argparse
import json
from pathlib import Path

import numpy as np

import dmlsim.onnx as donnx

FOLDER = Path(__file__).resolve().parents[1] / "tests" / "models" / "diffusion" / "optimized" / \
    "tiny-sd"
VAE_SCALING = 0.18215  # Stable Diffusion's latent scaling factor


class DDIM:
    """diffusers' DDIMScheduler with eta 0 (deterministic), for the options its config names:
    "linear" or "scaled_linear" betas, "leading" timestep spacing, epsilon prediction."""

    def __init__(self, config: dict, steps: int):
        if config.get("prediction_type", "epsilon") != "epsilon" or \
                config.get("timestep_spacing", "leading") != "leading":
            raise ValueError("DDIM: only epsilon prediction and leading timesteps")
        n = int(config.get("num_train_timesteps", 1000))
        b0, b1 = float(config["beta_start"]), float(config["beta_end"])
        betas = np.linspace(b0 ** 0.5, b1 ** 0.5, n) ** 2 \
            if config["beta_schedule"] == "scaled_linear" else np.linspace(b0, b1, n)
        self.alphas_cumprod = np.cumprod(1.0 - betas)
        self.final = 1.0 if config.get("set_alpha_to_one", True) else self.alphas_cumprod[0]
        self.ratio = n // steps
        self.timesteps = (np.arange(steps) * self.ratio)[::-1] + int(config.get("steps_offset", 0))

    def step(self, eps, t, x):
        a_t = self.alphas_cumprod[t]
        prev = t - self.ratio
        a_prev = self.alphas_cumprod[prev] if prev >= 0 else self.final
        x0 = (x - np.sqrt(1 - a_t) * eps) / np.sqrt(a_t)
        return np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps


def generate(folder=FOLDER, *, steps=4, seed=0, context=None, session=donnx.InferenceSession):
    """The image ([1, 3, H, W] in [0, 1]) after ``steps`` DDIM steps from seeded noise.
    ``session``: the InferenceSession class (dmlsim's, or ONNX Runtime's to compare)."""
    folder = Path(folder)
    unet = session(str(folder / "unet" / "model.onnx"))
    vae = session(str(folder / "vae_decoder" / "model.onnx"))
    ins = {a.name: a for a in unet.get_inputs()}
    dtype = np.float16 if ins["sample"].type == "tensor(float16)" else np.float32
    scheduler = DDIM(json.loads((folder / "scheduler" / "scheduler_config.json").read_text()),
                     steps)
    rng = np.random.default_rng(seed)
    shape = ins["sample"].shape
    latents = rng.standard_normal(shape)
    if context is None:
        context = rng.standard_normal(ins["encoder_hidden_states"].shape)
    for t in scheduler.timesteps:
        (eps,) = unet.run(None, {"sample": latents.astype(dtype),
                                 "timestep": np.array([t], np.int64),
                                 "encoder_hidden_states": np.asarray(context).astype(dtype)})
        latents = scheduler.step(eps.astype(np.float64), t, latents)
    (image,) = vae.run(None, {"latent_sample": (latents / VAE_SCALING).astype(dtype)})
    return np.clip(image.astype(np.float64) / 2 + 0.5, 0, 1)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", default=str(FOLDER))
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--png", help="save the image here (matplotlib)")
    args = p.parse_args(argv)
    image = generate(args.folder, steps=args.steps, seed=args.seed)
    print(f"{args.steps} DDIM steps through DML operators: image {list(image.shape)}, "
          f"mean {image.mean():.4f}, min {image.min():.4f}, max {image.max():.4f}")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.imsave(args.png, image[0].transpose(1, 2, 0))
        print(f"saved {args.png}")


if __name__ == "__main__":
    main()
