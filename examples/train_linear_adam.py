"""A training loop on DirectML operators: linear regression fitted with ADAM_OPTIMIZER.

One training step is one compiled graph (dmlsim.dmlx, through IDMLDevice1::CompileGraph):

    prediction = X W + b                     GEMM, b broadcast with zero strides
    residual   = prediction - Y              ELEMENT_WISE_SUBTRACT
    loss       = mean(residual^2)            ELEMENT_WISE_MULTIPLY, REDUCE (AVERAGE)
    dW         = (2 / N) X^T residual        GEMM (TransA, Alpha)
    db         = (2 / N) sum(residual)       REDUCE (SUM), then a scale
    W, mW, vW  = Adam(W, mW, vW, dW, T)      ADAM_OPTIMIZER
    b, mb, vb  = Adam(b, mb, vb, db, T)      ADAM_OPTIMIZER
    T + 1                                    ELEMENT_WISE_IDENTITY with a ScaleBias

The loop feeds the updated weights, both moments and the step counter back in, as a
DirectML training program keeps them in buffers between executions. Every step is checked
against the same step in float64 NumPy (gradients and Adam written out), and the fitted
weights against the least-squares solution.

    python examples/train_linear_adam.py
"""
import numpy as np

import dmlsim as dml
from dmlsim import dmlx

N, K, STEPS = 64, 3, 400
HYPER = {"LearningRate": 0.05, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 1e-7}
F32 = dml.DML_TENSOR_DATA_TYPE_FLOAT32


def training_step(device):
    """The graph's callable: (X, Y, W, mW, vW, b, mb, vb, T) -> (W, mW, vW, b, mb, vb, T, loss)."""
    graph = dmlx.Graph(device)
    shapes = [[1, 1, N, K], [1, 1, N, 1]] + [[1, 1, K, 1]] * 3 + [[1, 1, 1, 1]] * 4
    x, y, w, mw, vw, b, mb, vb, t = (dmlx.InputTensor(graph, i, dmlx.TensorDesc(F32, s))
                                     for i, s in enumerate(shapes))
    prediction = dmlx.Gemm(x, w) + dmlx.Reinterpret(b, [1, 1, N, 1], [0, 0, 0, 0])
    residual = dmlx.Subtract(prediction, y)
    loss = dmlx.Reduce(residual * residual, dml.DML_REDUCE_FUNCTION_AVERAGE, [2])
    dw = dmlx.Gemm(x, residual, transA=dml.DML_MATRIX_TRANSFORM_TRANSPOSE, alpha=2.0 / N)
    db = dmlx.Reduce(residual, dml.DML_REDUCE_FUNCTION_SUM, [2]) * (2.0 / N)
    w2, mw2, vw2 = dmlx.AdamOptimizer(w, mw, vw, dw, t, **HYPER)
    b2, mb2, vb2 = dmlx.AdamOptimizer(b, mb, vb, db, t, **HYPER)
    return graph.compile([w2, mw2, vw2, b2, mb2, vb2, t + 1.0, loss])


def adam_reference(p, m, v, g, t):
    """One Adam step in float64, the ADAM_OPTIMIZER page's formula."""
    b1, b2, lr, eps = (float(np.float32(HYPER[k])) for k in ("Beta1", "Beta2", "LearningRate",
                                                              "Epsilon"))
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    alpha = np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return p - lr * alpha * m / (np.sqrt(v) + eps), m, v


def main():
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((N, K))
    y = x @ np.array([2.0, -1.0, 0.5]) + 0.3 + 0.05 * rng.standard_normal(N)
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    step = training_step(dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE))
    X, Y = np.float32(x).reshape(1, 1, N, K), np.float32(y).reshape(1, 1, N, 1)
    zeros_w, zeros_b = np.zeros((1, 1, K, 1), np.float32), np.zeros((1, 1, 1, 1), np.float32)
    state = [zeros_w, zeros_w, zeros_w, zeros_b, zeros_b, zeros_b,
             np.ones((1, 1, 1, 1), np.float32)]  # W, mW, vW, b, mb, vb, T (from 1: the page's
    #                                              formula divides 0 by 0 at T = 0)
    # the same steps in float64 NumPy, beside: W and b with their moments
    xd, yd = x.reshape(N, K), y.reshape(N, 1)
    ref = {"w": (np.zeros((K, 1)), 0.0, 0.0), "b": (np.zeros((1, 1)), 0.0, 0.0)}
    worst = 0.0
    for i in range(STEPS):
        *new_state, loss = step(X, Y, *state[:3], *state[3:6], state[6])
        r = xd @ ref["w"][0] + ref["b"][0] - yd
        ref["w"] = adam_reference(*ref["w"], 2 / N * xd.T @ r, i + 1)
        ref["b"] = adam_reference(*ref["b"], 2 / N * r.sum(keepdims=True), i + 1)
        state = new_state
        got = np.r_[state[0].ravel(), state[3].ravel()]
        worst = max(worst, float(np.abs(got - np.r_[ref["w"][0].ravel(), ref["b"][0].ravel()])
                                 .max()))
        if i % 100 == 0 or i == STEPS - 1:
            print(f"step {int(state[6].item()) - 1:4d}  loss {float(loss.item()):.6f}")
    print(f"largest difference from the float64 NumPy steps: {worst:.2e}")
    assert worst < 1e-4, worst
    exact, *_ = np.linalg.lstsq(np.c_[x, np.ones(N)], y, rcond=None)
    fitted = np.r_[state[0].ravel(), state[3].ravel()]
    print("fitted W, b:", np.round(fitted, 4), " least squares:", np.round(exact, 4))
    assert np.allclose(fitted, exact, atol=2e-3), (fitted, exact)
    print("ok: every step matches Adam in float64 NumPy; the fit matches least squares")


if __name__ == "__main__":
    main()
