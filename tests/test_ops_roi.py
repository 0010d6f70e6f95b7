"""ROI_POOLING, ROI_ALIGN and ROI_ALIGN1 with random regions (inside, partly outside, inverted,
empty, several batch entries) against their float64 references."""
from __future__ import annotations

import numpy as np
import pytest

from reference_rig import run_against_reference


def _checked(*args, **kwargs):
    """run_against_reference, and its OutputTensor was compared with the reference."""
    got = run_against_reference(*args, **kwargs)
    assert "OutputTensor" in got, sorted(got)
    return got


RNG = np.random.default_rng(21)
X = RNG.standard_normal((2, 3, 7, 9)).astype(np.float32)
ROIS = np.float32([[0, 0, 8, 6], [1.3, 2.2, 5.7, 4.1], [-2, -1, 3, 2], [6, 5, 12, 9],
                   [5, 4, 1, 1], [2, 2, 2, 2]])
BATCH = np.uint32([0, 1, 1, 0, 1, 0])


@pytest.mark.parametrize("reduction", [2, 7], ids=["average", "max"])
@pytest.mark.parametrize("mode", [0, 1], ids=["nearest", "linear"])
@pytest.mark.parametrize("samples", [(1, 1), (2, 2), (1, 100)])
def test_roi_align(reduction, mode, samples):
    attrs = {"ReductionFunction": reduction, "InterpolationMode": mode, "SpatialScaleX": 1.0,
             "SpatialScaleY": 0.9, "OutOfBoundsInputValue": -3.0,
             "MinimumSamplesPerOutput": samples[0], "MaximumSamplesPerOutput": samples[1]}
    _checked("ROI_ALIGN", {"InputTensor": X, "ROITensor": ROIS,
                                        "BatchIndicesTensor": BATCH}, attrs,
                          outputs={"OutputTensor": np.zeros((6, 3, 3, 4), np.float32)})


@pytest.mark.parametrize("corners", [0, 1])
@pytest.mark.parametrize("offsets", [(0.5, -0.5), (0.0, 0.0)])
def test_roi_align1(corners, offsets):
    attrs = {"ReductionFunction": 2, "InterpolationMode": 1, "SpatialScaleX": 0.5,
             "SpatialScaleY": 1.0, "InputPixelOffset": offsets[0],
             "OutputPixelOffset": offsets[1], "OutOfBoundsInputValue": 0.0,
             "MinimumSamplesPerOutput": 1, "MaximumSamplesPerOutput": 3,
             "AlignRegionsToCorners": corners}
    _checked("ROI_ALIGN1", {"InputTensor": X, "ROITensor": ROIS * 2,
                                         "BatchIndicesTensor": BATCH}, attrs,
                          outputs={"OutputTensor": np.zeros((6, 3, 2, 5), np.float32)})


def test_roi_pooling():
    rois = np.concatenate([BATCH[:, None].astype(np.float32), np.abs(ROIS)], 1)
    rois[:, 3:] = np.maximum(rois[:, 3:], rois[:, 1:3])  # x2 >= x1, y2 >= y1 (the page)
    _checked("ROI_POOLING", {"InputTensor": X, "ROITensor": rois[None, None]},
                          {"SpatialScale": 0.75, "PooledSize": {"Width": 3, "Height": 2}})
