"""MXNet's RecordIO image iterators: ``ImageRecordIter``, ``ImageRecordUInt8Iter`` and
``ImageDetRecordIter`` (``mx.io``), reading the ``.rec`` files that ``im2rec`` writes.

Each batch decodes its images (Pillow, ``preprocess_threads`` threads), augments them
as MXNet's default C++ augmenter does (in its order: resize the shorter edge, the random
affine warp (rotation, shear, scale, aspect ratio), pad, random-resized / random-size /
centre or random crop, colour jitter, HLS jitter, PCA noise, mirror, then
``(x - mean) * scale / std``) and stacks them as ``(batch, C, H, W)`` RGB. Labels
come from the record headers (``label_width`` of them) or from ``path_imglist``.

Where ours differs from MXNet 1.9.1's C++ iterator:

- decoding is Pillow's (libjpeg-turbo and libpng, as MXNet's OpenCV; PNG and, in the
  tests, JPEG decode identically) and resizing follows OpenCV's formulas in NumPy
  (within one level of OpenCV's fixed-point results);
- the random numbers are NumPy's (seeded by ``seed``/``seed_aug``), not MXNet's; a
  seed gives the same batches whatever ``preprocess_threads`` is;
- ``shuffle`` reorders all records of the part each epoch (MXNet without an ``.idx``
  shuffles within chunks); ``shuffle_chunk_*`` and ``prefetch_buffer`` are accepted
  and ignored;
- ``round_batch=False`` pads the last batch with the first images and reports the pad
  (MXNet 1.9.1 leaves stale data there and reports pad 0);
- the affine warp (``max_rotate_angle``, ``rotate``, ``max_shear_ratio``,
  ``max/min_random_scale``, ``max/min_img_size``, aspect ratios) samples bilinearly
  whatever ``inter_method`` is.

Example:
    >>> import os, tempfile, numpy, pytest
    >>> _ = pytest.importorskip("PIL")
    >>> from core import recordio
    >>> from core.io import ImageRecordIter
    >>> d = tempfile.mkdtemp(); rec = os.path.join(d, 'a.rec')
    >>> w = recordio.MXRecordIO(rec, 'w')
    >>> for i in range(3):
    ...     w.write(recordio.pack_img(recordio.IRHeader(0, float(i), i, 0),
    ...                               numpy.full((6, 8, 3), 10 * i, 'uint8'), img_fmt='.png'))
    >>> w.close()
    >>> it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 4, 4), batch_size=2)
    >>> [(b.data[0].shape, b.label[0].asnumpy().tolist(), b.pad) for b in it]
    [((2, 3, 4, 4), [0.0, 1.0], 0), ((2, 3, 4, 4), [2.0, 0.0], 1)]
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy

from .. import recordio
from ..ndarray import array
from .base import DataBatch, DataDesc, DataIter

__all__ = ["ImageDetRecordIter", "ImageRecordIter", "ImageRecordUInt8Iter"]

_EIG = numpy.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], numpy.float32)
# MXNet converts its BGR images with OpenCV's RGB2GRAY, so the weights land swapped.
_GRAY = numpy.array([0.114, 0.587, 0.299], numpy.float32)

_AUG_DEFAULTS = {
    "resize": -1, "rand_crop": False, "random_resized_crop": False, "max_rotate_angle": 0,
    "max_aspect_ratio": 0.0, "min_aspect_ratio": None, "max_shear_ratio": 0.0, "max_crop_size": -1,
    "min_crop_size": -1, "max_random_scale": 1.0, "min_random_scale": 1.0, "max_random_area": 1.0,
    "min_random_area": 1.0, "max_img_size": 1e10, "min_img_size": 0.0, "brightness": 0.0, "contrast": 0.0,
    "saturation": 0.0, "pca_noise": 0.0, "random_h": 0, "random_s": 0, "random_l": 0, "rotate": -1.0,
    "fill_value": 255, "inter_method": 1, "pad": 0}
_NORM_DEFAULTS = {
    "mirror": False, "rand_mirror": False, "mean_img": "", "mean_r": 0.0, "mean_g": 0.0, "mean_b": 0.0,
    "mean_a": 0.0, "std_r": 1.0, "std_g": 1.0, "std_b": 1.0, "std_a": 1.0, "scale": 1.0,
    "max_random_contrast": 0.0, "max_random_illumination": 0.0}
_IGNORED = ("verbose", "prefetch_buffer", "ctx", "device_id", "shuffle_chunk_size",
            "shuffle_chunk_seed", "aug_seq")


# ------------------------------------------------------------------ resizing (cv2.resize)
def _cubic(t):
    a, t = -0.75, numpy.abs(t)
    return numpy.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                       numpy.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _axis_weights(n_in: int, n_out: int, method: int) -> numpy.ndarray:
    """The ``(n_out, n_in)`` interpolation matrix of one axis, as cv2.resize samples."""
    scale = n_in / n_out
    d = numpy.arange(n_out, dtype=numpy.float64)
    rows = numpy.arange(n_out)
    w = numpy.zeros((n_out, n_in))
    if method == 0:
        w[rows, numpy.minimum(numpy.floor(d * scale).astype(int), n_in - 1)] = 1.0
        return w
    if method == 3 and n_out <= n_in:
        lo, hi = d * scale, (d + 1) * scale
        i = numpy.arange(n_in, dtype=numpy.float64)
        over = numpy.minimum(hi[:, None], i[None] + 1) - numpy.maximum(lo[:, None], i[None])
        return numpy.clip(over, 0, None) / scale
    fx = (d + 0.5) * scale - 0.5
    sx = numpy.floor(fx)
    fx -= sx
    sx = sx.astype(int)
    if method in (1, 3):
        edge = (sx < 0) | (sx >= n_in - 1)
        fx = numpy.where(edge, 0.0, fx)
        sx = numpy.clip(sx, 0, n_in - 1)
        numpy.add.at(w, (rows, sx), 1 - fx)
        numpy.add.at(w, (rows, numpy.minimum(sx + 1, n_in - 1)), fx)
        return w
    offsets = numpy.arange(-1, 3) if method == 2 else numpy.arange(-3, 5)
    t = fx[:, None] - offsets[None]
    if method == 2:
        taps = _cubic(t)
    else:
        taps = numpy.sinc(t) * numpy.sinc(t / 4)
        taps /= taps.sum(axis=1, keepdims=True)
    idx = numpy.clip(sx[:, None] + offsets[None], 0, n_in - 1)
    numpy.add.at(w, (numpy.repeat(rows, len(offsets)), idx.ravel()), taps.ravel())
    return w


def _interp(method: int, old_wh, new_wh, rng) -> int:
    if method == 9:
        if new_wh[0] > old_wh[0] and new_wh[1] > old_wh[1]:
            return 2
        if new_wh[0] < old_wh[0] and new_wh[1] < old_wh[1]:
            return 3
        return 1
    if method == 10:
        return int(rng.integers(0, 5))
    return method


def _resize(img: numpy.ndarray, w: int, h: int, method: int) -> numpy.ndarray:
    """Resize a uint8 ``(H, W, C)`` image to ``(h, w)`` as ``cv2.resize`` does."""
    if img.shape[:2] == (h, w):
        return img
    wh = _axis_weights(img.shape[0], h, method).astype(numpy.float32)
    ww = _axis_weights(img.shape[1], w, method).astype(numpy.float32)
    out = numpy.einsum("oh,hwc->owc", wh, img.astype(numpy.float32))
    out = numpy.einsum("pw,owc->opc", ww, out)
    return numpy.clip(numpy.rint(out), 0, 255).astype(numpy.uint8)


def _saturate(x) -> numpy.ndarray:
    return numpy.clip(numpy.rint(x), 0, 255).astype(numpy.uint8)


class _Params:
    """The iterator's arguments, checked once."""

    def __init__(self, owner: str, kwargs: dict):
        self.owner = owner
        known = dict(_AUG_DEFAULTS, **_NORM_DEFAULTS)
        for k in _IGNORED:
            kwargs.pop(k, None)
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise TypeError(f"{owner}: unknown argument(s) {', '.join(unknown)}")
        for k, v in known.items():
            setattr(self, k, kwargs.get(k, v))
        self._unsupported()

    def _unsupported(self) -> None:
        if self.inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise ValueError(f"{self.owner}: inter_method must be 0-4, 9 or 10, got "
                             f"{self.inter_method}")
        if self.random_resized_crop and (self.rand_crop or self.max_crop_size != -1
                                         or self.min_crop_size != -1):
            raise ValueError(f"{self.owner}: random_resized_crop conflicts with rand_crop, "
                             f"min_crop_size and max_crop_size")

    def aspect_range(self) -> tuple:
        if self.min_aspect_ratio is not None:
            return float(self.min_aspect_ratio), float(self.max_aspect_ratio)
        return 1.0 - self.max_aspect_ratio, 1.0 + self.max_aspect_ratio


def _affine_wanted(p: _Params) -> bool:
    lo, hi = p.aspect_range()
    return (p.max_rotate_angle > 0 or p.max_shear_ratio > 0 or p.rotate > 0
            or p.max_random_scale != 1 or p.min_random_scale != 1
            or (not p.random_resized_crop and (lo, hi) != (1.0, 1.0))
            or p.max_img_size != 1e10 or p.min_img_size != 0)


def _warp_affine(img: numpy.ndarray, m: numpy.ndarray, w: int, h: int, fill) -> numpy.ndarray:
    """``cv2.warpAffine(img, m, (w, h))``, bilinear, constant border ``fill``."""
    inv = numpy.linalg.inv(numpy.vstack([m.astype(numpy.float64), [0, 0, 1]]))[:2]
    yy, xx = numpy.mgrid[0:h, 0:w].astype(numpy.float64)
    # OpenCV rounds the source coordinates to 1/32 of a pixel.
    sx = numpy.rint((inv[0, 0] * xx + inv[0, 1] * yy + inv[0, 2]) * 32) / 32
    sy = numpy.rint((inv[1, 0] * xx + inv[1, 1] * yy + inv[1, 2]) * 32) / 32
    x0, y0 = numpy.floor(sx).astype(int), numpy.floor(sy).astype(int)
    fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
    src = numpy.pad(img.astype(numpy.float32), ((1, 2), (1, 2), (0, 0)), constant_values=fill)
    H, W = img.shape[:2]

    def tap(yi, xi):
        ok = (yi >= -1) & (yi <= H) & (xi >= -1) & (xi <= W)
        v = src[numpy.clip(yi + 1, 0, H + 2), numpy.clip(xi + 1, 0, W + 2)]
        return numpy.where(ok[..., None], v, numpy.float32(fill))

    out = (tap(y0, x0) * (1 - fx) * (1 - fy) + tap(y0, x0 + 1) * fx * (1 - fy)
           + tap(y0 + 1, x0) * (1 - fx) * fy + tap(y0 + 1, x0 + 1) * fx * fy)
    return _saturate(out)


def _affine(p: _Params, img: numpy.ndarray, rng) -> numpy.ndarray:
    """MXNet's random rotation, shear, scale and aspect-ratio warp (one affine map)."""
    lo, hi = p.aspect_range()
    s = rng.uniform() * p.max_shear_ratio * 2 - p.max_shear_ratio
    angle = int(rng.integers(-int(p.max_rotate_angle), int(p.max_rotate_angle) + 1))
    if p.rotate > 0:
        angle = int(p.rotate)
    a, b = math.cos(angle / 180.0 * math.pi), math.sin(angle / 180.0 * math.pi)
    scale = ratio = 1.0
    if not p.random_resized_crop:
        scale = rng.uniform() * (p.max_random_scale - p.min_random_scale) + p.min_random_scale
        ratio = rng.uniform() * (hi - lo) + lo
    hs = 2 * scale / (1 + ratio)
    ws = ratio * hs
    rows, cols = img.shape[:2]
    new_w = max(p.min_img_size, min(p.max_img_size, scale * cols))
    new_h = max(p.min_img_size, min(p.max_img_size, scale * rows))
    m = numpy.array([[hs * a - s * b * ws, hs * b + s * a * ws, 0.0],
                     [-b * ws, a * ws, 0.0]], numpy.float32)
    m[0, 2] = (new_w - (m[0, 0] * cols + m[0, 1] * rows)) / 2
    m[1, 2] = (new_h - (m[1, 0] * cols + m[1, 1] * rows)) / 2
    return _warp_affine(img, m, int(new_w), int(new_h), p.fill_value)


def _rgb_to_hls8(img: numpy.ndarray) -> numpy.ndarray:
    """OpenCV's 8-bit RGB -> HLS (H in [0, 180), L and S in [0, 255])."""
    # float32 in OpenCV's order of operations, so that halves round as OpenCV's do
    x = img[..., :3].astype(numpy.float32) * numpy.float32(1 / 255)
    vmax, vmin = x.max(-1), x.min(-1)
    diff, light = vmax - vmin, (vmax + vmin) * numpy.float32(0.5)
    chroma = diff > numpy.finfo(numpy.float32).eps
    safe = numpy.where(chroma, diff, 1)
    sat = numpy.where(light < 0.5, diff / numpy.maximum(vmax + vmin, 1e-12),
                      diff / numpy.maximum(2 - vmax - vmin, 1e-12))
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    k = numpy.float32(60) / safe
    hue = numpy.where(vmax == r, (g - b) * k,
                      numpy.where(vmax == g, (b - r) * k + numpy.float32(120),
                                  (r - g) * k + numpy.float32(240)))
    hue = numpy.where(hue < 0, hue + numpy.float32(360), hue)
    hue, sat = numpy.where(chroma, hue, 0), numpy.where(chroma, sat, 0)
    f32 = numpy.float32
    return numpy.stack([numpy.rint(hue * f32(0.5)), numpy.rint(light * f32(255)),
                        numpy.rint(sat * f32(255))], -1).astype(numpy.int64)


def _hls8_to_rgb(hls: numpy.ndarray) -> numpy.ndarray:
    """OpenCV's 8-bit HLS -> RGB."""
    h = hls[..., 0].astype(numpy.float32) * 2
    lig = hls[..., 1].astype(numpy.float32) / 255
    sat = hls[..., 2].astype(numpy.float32) / 255
    p2 = numpy.where(lig <= 0.5, lig * (1 + sat), lig + sat - lig * sat)
    p1 = 2 * lig - p2
    h6 = numpy.mod(h, 360) / 60
    sector = numpy.floor(h6).astype(int)
    frac = h6 - sector
    tab = numpy.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac], -1)
    order = numpy.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    bgr = numpy.take_along_axis(tab, order[numpy.minimum(sector, 5)], -1)
    rgb = numpy.where((sat == 0)[..., None], lig[..., None], bgr[..., ::-1])
    return _saturate(rgb * 255)


def _hls_jitter(p: _Params, img: numpy.ndarray, rng) -> numpy.ndarray:
    """MXNet's ``random_h/s/l``: integer offsets (nearly Gaussian) added in HLS space."""
    draws = []
    for limit in (p.random_h, p.random_s, p.random_l):
        r = (rng.uniform() + 4 * rng.uniform()) / 5
        draws.append(int(r * limit * 2 - limit))
    dh, ds, dl = draws
    hls = _rgb_to_hls8(img)
    hls += numpy.array([dh, dl, ds])
    hls = numpy.clip(hls, 0, numpy.array([180, 255, 255]))
    out = img.copy()
    out[..., :3] = _hls8_to_rgb(hls)
    return out


def _augment(p: _Params, img: numpy.ndarray, data_shape, rng) -> numpy.ndarray:
    """MXNet's default augmenter on one RGB(A)/gray uint8 ``(H, W, C)`` image."""
    _, oh, ow = data_shape
    if p.resize > 0:
        h, w = img.shape[:2]
        nh, nw = (p.resize * h // w, p.resize) if h > w else (p.resize, p.resize * w // h)
        img = _resize(img, nw, nh, _interp(p.inter_method, (w, h), (nw, nh), rng))
    if _affine_wanted(p):
        img = _affine(p, img, rng)
    if p.pad > 0:
        img = numpy.pad(img, ((p.pad, p.pad), (p.pad, p.pad), (0, 0)),
                        constant_values=p.fill_value)
    cropped = False
    if p.random_resized_crop:
        lo, hi = p.aspect_range()
        if (p.max_random_area, p.min_random_area, lo, hi) != (1.0, 1.0, 1.0, 1.0):
            if lo <= 0 or p.min_random_area > p.max_random_area or lo > hi:
                raise ValueError(f"{p.owner}: need 0 < min_aspect_ratio <= max_aspect_ratio "
                                 f"and min_random_area <= max_random_area")
            area = img.shape[0] * img.shape[1]
            for _ in range(10):
                target = area * rng.uniform(p.min_random_area, p.max_random_area)
                ratio = rng.uniform(lo, hi)
                ya, xa = round(math.sqrt(target / ratio)), round(math.sqrt(target * ratio))
                if rng.uniform() > 0.5:
                    ya, xa = xa, ya
                if ya <= img.shape[0] and xa <= img.shape[1]:
                    y = int(rng.integers(0, img.shape[0] - ya + 1))
                    x = int(rng.integers(0, img.shape[1] - xa + 1))
                    img = _resize(img[y:y + ya, x:x + xa], ow, oh,
                                  _interp(p.inter_method, (xa, ya), (ow, oh), rng))
                    cropped = True
                    break
    elif p.max_crop_size != -1 or p.min_crop_size != -1:
        if (img.shape[1] < p.max_crop_size or img.shape[0] < p.max_crop_size
                or p.max_crop_size < p.min_crop_size):
            raise ValueError(f"{p.owner}: the image ({img.shape[0]}x{img.shape[1]}) is "
                             f"smaller than max_crop_size={p.max_crop_size}, or "
                             f"max_crop_size < min_crop_size={p.min_crop_size}")
        size = int(rng.integers(p.min_crop_size, p.max_crop_size + 1))
        y, x = img.shape[0] - size, img.shape[1] - size
        if p.rand_crop:
            y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
        else:
            y, x = y // 2, x // 2
        img = _resize(img[y:y + size, x:x + size], ow, oh,
                      _interp(p.inter_method, (size, size), (ow, oh), rng))
        cropped = True
    if not cropped:
        method = _interp(p.inter_method, img.shape[1::-1], (ow, oh), rng)
        if img.shape[0] < oh:
            img = _resize(img, int(oh / img.shape[0] * img.shape[1]), oh, method)
        if img.shape[1] < ow:
            img = _resize(img, ow, int(ow / img.shape[1] * img.shape[0]), method)
        y, x = img.shape[0] - oh, img.shape[1] - ow
        if p.rand_crop:
            y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
        else:
            y, x = y // 2, x // 2
        img = img[y:y + oh, x:x + ow]
    if (p.brightness > 0 or p.contrast > 0 or p.saturation > 0) and img.shape[2] >= 3:
        alphas = [1.0 + rng.uniform(-v, v) for v in (p.brightness, p.contrast, p.saturation)]
        for i in rng.permutation(3):
            f = img.astype(numpy.float32)
            gray = f[..., :3] @ _GRAY
            if i == 0:
                img = _saturate(f * alphas[0])
            elif i == 1:
                img = _saturate(f * alphas[1] + (1 - alphas[1]) * float(gray.mean()))
            else:
                img = _saturate(f * alphas[2] + (1 - alphas[2]) * gray[..., None])
    if (p.random_h or p.random_s or p.random_l) and img.shape[2] >= 3:
        img = _hls_jitter(p, img, rng)
    if p.pca_noise > 0 and img.shape[2] >= 3:
        noise = _EIG @ rng.normal(0, p.pca_noise, 3).astype(numpy.float32)
        img = numpy.clip(numpy.trunc(img[..., :3] + noise), 0, 255).astype(numpy.uint8)
    return img


class ImageRecordIter(DataIter):
    """Batches of augmented images from a RecordIO file (MXNet's ``mx.io.ImageRecordIter``).

    Args:
        path_imgrec: the ``.rec`` file.
        data_shape: ``(channels, height, width)`` of one image; channels 1 (gray),
            3 (RGB) or 4 (RGBA).
        batch_size: images per batch.
        path_imgidx: the ``.idx`` file (optional; the records are found by scanning
            the ``.rec`` file without it).
        path_imglist: a ``.lst`` file whose labels replace the records' (matched by
            the record header's id).
        label_width: labels per image; the label batch is ``(batch,)`` for 1, else
            ``(batch, label_width)``.
        shuffle: reorder the records every epoch (``seed`` seeds it).
        seed: the random seed of shuffling and augmentation.
        seed_aug: if given, each image's augmentation is drawn from ``(seed_aug, its
            index)``: the same in every epoch.
        round_batch: fill the last batch from the start of the data (the next epoch
            then starts after those images), else pad it with the first images.
        num_parts, part_index: read only part ``part_index`` of ``num_parts``
            contiguous parts (distributed training).
        preprocess_threads: threads decoding and augmenting.
        dtype: ``'float32'`` (default), ``'uint8'`` (no normalization) or ``'int8'``.
        data_name, label_name: the names in ``provide_data``/``provide_label``.
        **kwargs: MXNet's augmentation and normalization arguments: ``resize``,
            ``max_rotate_angle``, ``rotate``, ``max_shear_ratio``,
            ``max/min_random_scale``, ``max/min_img_size``, ``random_h/s/l``,
            ``rand_crop``, ``random_resized_crop``, ``max/min_random_area``,
            ``max/min_aspect_ratio``, ``max/min_crop_size``, ``rand_mirror``, ``mirror``,
            ``mean_r/g/b/a`` or ``mean_img`` (a mean-image file, computed over the data
            and saved there when missing), ``std_r/g/b/a``, ``scale``, ``max_random_contrast``,
            ``max_random_illumination``, ``brightness``, ``contrast``, ``saturation``,
            ``pca_noise``, ``pad``, ``fill_value``, ``inter_method``.

    Raises:
        FileNotFoundError: a missing ``.rec``, ``.idx`` or ``.lst`` file.
        ValueError: a bad shape or argument, or a record whose label does not have
            ``label_width`` values (named by file and record).

    Example:
        >>> from core.io import ImageRecordIter
        >>> ImageRecordIter(path_imgrec='missing.rec', data_shape=(3, 4, 4), batch_size=2)
        Traceback (most recent call last):
        ...
        FileNotFoundError: ImageRecordIter: path_imgrec='missing.rec': no such file
    """

    _owner = "ImageRecordIter"
    _default_dtype = "float32"

    def __init__(self, path_imgrec: str = "", data_shape=None, batch_size: int = 0,
                 path_imgidx: str = "", path_imglist: str = "", label_width: int = 1,
                 shuffle: bool = False, seed: int = 0, seed_aug=None, round_batch: bool = True,
                 num_parts: int = 1, part_index: int = 0, preprocess_threads: int = 4,
                 dtype=None, data_name: str = "data", label_name: str = "softmax_label",
                 **kwargs):
        owner = self._owner
        super().__init__(int(batch_size))
        if not path_imgrec:
            raise ValueError(f"{owner}: path_imgrec (the .rec file) is required")
        for field, path in (("path_imgrec", path_imgrec), ("path_imgidx", path_imgidx),
                            ("path_imglist", path_imglist)):
            if path and not os.path.isfile(path):
                raise FileNotFoundError(f"{owner}: {field}={path!r}: no such file")
        if data_shape is None or len(tuple(data_shape)) != 3 or min(data_shape) < 1:
            raise ValueError(f"{owner}: data_shape must be (channels, height, width) with "
                             f"positive sizes, got {data_shape!r}")
        self.data_shape = tuple(int(s) for s in data_shape)
        if self.data_shape[0] not in (1, 3, 4):
            raise ValueError(f"{owner}: data_shape[0] (channels) must be 1, 3 or 4, got "
                             f"{self.data_shape[0]} in {self.data_shape}")
        if self.batch_size < 1:
            raise ValueError(f"{owner}: batch_size must be at least 1, got {batch_size}")
        if int(label_width) < 1:
            raise ValueError(f"{owner}: label_width must be at least 1, got {label_width}")
        if num_parts < 1 or not 0 <= part_index < num_parts:
            raise ValueError(f"{owner}: need 0 <= part_index < num_parts, got "
                             f"part_index={part_index}, num_parts={num_parts}")
        self.dtype = numpy.dtype(dtype or self._default_dtype)
        if self.dtype.name not in ("float32", "uint8", "int8"):
            raise ValueError(f"{owner}: dtype must be float32, uint8 or int8, got {dtype!r}")
        self._p = _Params(owner, dict(kwargs))
        self.path_imgrec = path_imgrec
        self.label_width = int(label_width)
        self.shuffle = bool(shuffle)
        self.seed, self.seed_aug = int(seed), seed_aug
        self.round_batch = bool(round_batch)
        self.preprocess_threads = max(1, int(preprocess_threads))
        if path_imgidx:
            self._rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            offsets = [self._rec.idx[k] for k in self._rec.keys]
        else:
            self._rec = recordio.MXRecordIO(path_imgrec, "r")
            offsets = self._rec._scan_offsets()
        n = len(offsets)
        step = -(-n // num_parts)
        self._offsets = offsets[part_index * step:min((part_index + 1) * step, n)]
        if not self._offsets:
            raise ValueError(f"{owner}: {path_imgrec!r} part {part_index} of {num_parts} holds "
                             f"no records ({n} in the file)")
        self._imglist = self._read_imglist(path_imglist) if path_imglist else None
        label_shape = (self.batch_size,) if self.label_width == 1 else \
            (self.batch_size, self.label_width)
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + self.data_shape,
                                      self.dtype.type)]
        self.provide_label = [DataDesc(label_name, label_shape, numpy.float32)]
        self._pool = ThreadPoolExecutor(self.preprocess_threads)
        self._mean = None
        if self._p.mean_img and self.dtype == numpy.float32:
            self._mean = self._mean_image(self._p.mean_img)
        self._epoch = -1
        self._carry = 0
        self._current = None
        self.reset()

    # -------------------------------------------------------------- set-up helpers
    def _read_imglist(self, path: str) -> dict:
        table = {}
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    key, labels = int(fields[0]), [float(v) for v in fields[1:-1]]
                except ValueError:
                    raise ValueError(f"{self._owner}: {path!r} line {n}: expected "
                                     f"'index<TAB>label(s)<TAB>path', got {line.rstrip()!r}"
                                     ) from None
                if len(labels) != self.label_width:
                    raise ValueError(f"{self._owner}: {path!r} line {n} has {len(labels)} "
                                     f"label(s) but label_width={self.label_width}")
                table[key] = numpy.asarray(labels, numpy.float32)
        return table

    def _mean_image(self, path: str) -> numpy.ndarray:
        """The ``(C, H, W)`` mean image: read from ``path``, or computed over the data (the
        augmented images, before normalization) and saved there, as MXNet does."""
        from .. import serialization
        from ..ndarray import array as nd_array

        if os.path.isfile(path):
            loaded = serialization.load(path)
            arrays = list(loaded.values()) if isinstance(loaded, dict) else loaded
            if len(arrays) != 1:
                raise ValueError(f"{self._owner}: mean_img={path!r} holds {len(arrays)} arrays, "
                                 f"expected one")
            mean = arrays[0].asnumpy().astype(numpy.float32)
            if mean.shape != self.data_shape:
                raise ValueError(f"{self._owner}: mean_img={path!r} has shape {mean.shape}, "
                                 f"data_shape is {self.data_shape}")
            return mean
        self._epoch = 0
        total = numpy.zeros(self.data_shape, numpy.float64)
        for row, idx in enumerate(range(len(self._offsets))):
            total += self._augmented((idx, row))[0].transpose(2, 0, 1)
        mean = (total / len(self._offsets)).astype(numpy.float32)
        serialization.save(path, {"mean_img": nd_array(mean)})
        return mean

    # -------------------------------------------------------------- iteration
    def reset(self) -> None:
        """Start the next epoch (after a ``round_batch`` overflow: past the reused images)."""
        self._epoch += 1
        n = len(self._offsets)
        if self.shuffle:
            self._order = numpy.random.default_rng([self.seed, self._epoch]).permutation(n)
        else:
            self._order = numpy.arange(n)
        self._pos = self._carry if self.round_batch else 0
        self._carry = 0
        self._done = False
        self._current = None

    def iter_next(self) -> bool:
        """Decode and augment the next batch; False at the end of the epoch."""
        n, bs = len(self._order), self.batch_size
        if self._done or self._pos >= n:
            return False
        rows = list(range(self._pos, min(self._pos + bs, n)))
        self._pos += len(rows)
        pad = bs - len(rows)
        if pad:
            rows += [i % n for i in range(pad)]
            self._carry = pad % n if self.round_batch else 0
            self._done = True
        items = [(int(self._order[r]), r) for r in rows]
        results = list(self._pool.map(self._load, items))
        data = numpy.stack([r[0] for r in results])
        label = numpy.stack([r[1] for r in results])
        if label.ndim == 2 and label.shape[1] == 1:
            label = label[:, 0]
        self._current = (data, label, pad, numpy.array([r[2] for r in results], numpy.uint64))
        return True

    def next(self) -> DataBatch:
        """The next batch (``StopIteration`` at the end of the epoch)."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex(), provide_data=self.provide_data,
                         provide_label=self.provide_label)

    def _need(self):
        if self._current is None:
            raise RuntimeError(f"{self._owner}: no current batch; call iter_next() or next()")
        return self._current

    def getdata(self):
        """The current batch's images, ``(batch, C, H, W)``."""
        return array(self._need()[0], dtype=self.dtype)

    def getlabel(self):
        """The current batch's labels, ``(batch,)`` or ``(batch, label_width)`` float32."""
        return array(self._need()[1], dtype=numpy.float32)

    def getpad(self) -> int:
        """Padding images at the end of the current batch."""
        return self._need()[2]

    def getindex(self):
        """The record ids (header ``id``) of the current batch."""
        return self._need()[3]

    # -------------------------------------------------------------- one image
    def _label(self, header, where: str) -> numpy.ndarray:
        if self._imglist is not None:
            if header.id not in self._imglist:
                raise ValueError(f"{where}: id {header.id} is not in path_imglist")
            return self._imglist[header.id]
        if header.flag > 0:
            if header.flag != self.label_width:
                raise ValueError(f"{where} holds {header.flag} labels but "
                                 f"label_width={self.label_width}")
            return numpy.asarray(header.label, numpy.float32)
        if self.label_width != 1:
            raise ValueError(f"{where} holds one label but label_width={self.label_width}; "
                             f"pack the labels into the record (im2rec --pack-label) or "
                             f"give path_imglist")
        return numpy.full(1, header.label, numpy.float32)

    def _rng(self, idx: int, row: int):
        if self.seed_aug is not None:
            return numpy.random.default_rng([int(self.seed_aug), idx])
        return numpy.random.default_rng([self.seed, self._epoch, row])

    def _decode(self, buf: bytes, where: str) -> numpy.ndarray:
        c = self.data_shape[0]
        img = recordio.decode_image(buf, {1: 0, 3: 1, 4: -1}[c], True, where)
        if img.shape[2] != c:
            raise ValueError(f"{where}: the image has {img.shape[2]} channel(s), data_shape "
                             f"{self.data_shape} asks for {c}")
        return img

    def _augmented(self, item):
        """``(augmented (H, W, C) uint8 image, label, id, rng)`` of record ``item[0]``."""
        idx, row = item
        offset = self._offsets[idx]
        where = f"{self._owner}: {self.path_imgrec!r} record {idx} (byte offset {offset})"
        header, buf = recordio.unpack(self._rec._read_at(offset))
        label = self._label(header, where)
        rng = self._rng(idx, row)
        img = _augment(self._p, self._decode(buf, where), self.data_shape, rng)
        if img.shape[:2] != self.data_shape[1:]:
            raise ValueError(f"{where}: the augmented image is {img.shape[:2]}, data_shape "
                             f"{self.data_shape}")
        if self._mirrored(rng):
            img = img[:, ::-1]
        return img, label, header.id, rng

    def _load(self, item):
        img, label, ident, rng = self._augmented(item)
        return self._finish(img, rng), label, ident

    def _mirrored(self, rng) -> bool:
        return bool((self._p.rand_mirror and rng.uniform() < 0.5) or self._p.mirror)

    def _finish(self, img: numpy.ndarray, rng) -> numpy.ndarray:
        """Normalize (float32 or int8) and transpose to ``(C, H, W)``."""
        p = self._p
        c = img.shape[2]
        if self.dtype == numpy.uint8:
            return numpy.ascontiguousarray(img.transpose(2, 0, 1))
        mean = numpy.array([p.mean_r, p.mean_g, p.mean_b, p.mean_a][:c] if c > 1 else
                           [p.mean_r], numpy.float32)
        if self.dtype == numpy.int8:
            out = img.astype(numpy.int16) - numpy.round(mean).astype(numpy.int16)
            return numpy.clip(out, -128, 127).astype(numpy.int8).transpose(2, 0, 1).copy()
        std = numpy.array([p.std_r, p.std_g, p.std_b, p.std_a][:c] if c > 1 else [p.std_r],
                          numpy.float32)
        contrast = (rng.uniform() * p.max_random_contrast * 2 - p.max_random_contrast + 1) \
            * p.scale
        illum = (rng.uniform() * p.max_random_illumination * 2
                 - p.max_random_illumination) * p.scale
        x = img.astype(numpy.float32).transpose(2, 0, 1)
        mean = self._mean if self._mean is not None else mean[:, None, None]
        out = (x - mean) * (contrast / std)[:, None, None] + (illum / std)[:, None, None]
        return numpy.ascontiguousarray(out, dtype=numpy.float32)

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False)


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with uint8 images (no normalization), as MXNet's deprecated
    ``ImageRecordUInt8Iter`` (same as ``ImageRecordIter(dtype='uint8')``).

    Example:
        >>> from core.io import ImageRecordUInt8Iter
        >>> ImageRecordUInt8Iter._default_dtype
        'uint8'
    """

    _owner = "ImageRecordUInt8Iter"
    _default_dtype = "uint8"


class ImageDetRecordIter(ImageRecordIter):
    """Object-detection batches from a RecordIO file (MXNet's ``mx.io.ImageDetRecordIter``,
    without its random crop/expand/colour augmenter).

    A record's label array is MXNet's detection layout: ``[header_width, object_width,
    <header_width - 2 extra values>, obj0..., obj1..., ...]`` with objects as
    ``[class, xmin, ymin, xmax, ymax, ...]`` in relative coordinates. Each image is
    resized to ``data_shape`` (relative boxes stay valid), mirrored with ``rand_mirror``
    / ``mirror`` (boxes flipped too) and normalized. The label batch is MXNet's:
    ``(batch, 4 + L)``, each row ``[C, H, W, n, <the n label values>, pad...]`` with
    ``L`` = ``label_pad_width`` or else the longest label in the file, padded with
    ``label_pad_value``.

    Args:
        path_imgrec: the ``.rec`` file.
        data_shape: ``(channels, height, width)``.
        batch_size: images per batch.
        label_pad_width: the padded label length ``L`` (0: the longest label).
        label_pad_value: the padding value (default -1).
        **kwargs: as :class:`ImageRecordIter` (``path_imgidx``, ``shuffle``, ``seed``,
            ``round_batch``, ``num_parts``, ``part_index``, ``rand_mirror``, ``mirror``,
            ``mean_r/g/b``, ``std_r/g/b``, ``scale``, ``inter_method``, ...).

    Raises:
        NotImplementedError: an augmentation argument other than ``inter_method``.
        ValueError: a record's label is not in the detection layout, or longer than
            ``label_pad_width``.

    Example:
        >>> from core.io import ImageDetRecordIter
        >>> ImageDetRecordIter._owner
        'ImageDetRecordIter'
    """

    _owner = "ImageDetRecordIter"

    def __init__(self, path_imgrec: str = "", data_shape=None, batch_size: int = 0,
                 label_pad_width: int = 0, label_pad_value: float = -1.0, **kwargs):
        for k, default in _AUG_DEFAULTS.items():
            if k not in ("inter_method", "fill_value") and kwargs.get(k, default) != default:
                raise NotImplementedError(f"ImageDetRecordIter: {k} is not implemented here")
        for k in ("label_width", "path_imglist"):
            kwargs.pop(k, None)
        self._pad_width = int(label_pad_width)
        self._pad_value = float(label_pad_value)
        super().__init__(path_imgrec, data_shape, batch_size, label_width=1, **kwargs)
        longest = 0
        for offset in self._offsets:
            header, _ = recordio.unpack(self._rec._read_at(offset))
            longest = max(longest, self._check_label(header, offset).size)
        if self._pad_width and self._pad_width < longest:
            raise ValueError(f"ImageDetRecordIter: {path_imgrec!r} holds a label of {longest} "
                             f"values, more than label_pad_width={self._pad_width}")
        self._label_len = self._pad_width or longest
        self.provide_label = [DataDesc(self.provide_label[0].name,
                                       (self.batch_size, 4 + self._label_len), numpy.float32)]

    def _check_label(self, header, offset) -> numpy.ndarray:
        label = numpy.atleast_1d(numpy.asarray(header.label, numpy.float32))
        where = f"ImageDetRecordIter: {self.path_imgrec!r} record at byte offset {offset}"
        if label.size < 2 or int(label[0]) < 2 or int(label[1]) < 1:
            raise ValueError(f"{where}: expected a detection label [header_width, "
                             f"object_width, ...], got {label.tolist()}")
        if (label.size - int(label[0])) % int(label[1]):
            raise ValueError(f"{where}: {label.size - int(label[0])} object values are not a "
                             f"multiple of the object width {int(label[1])}")
        return label

    def _label(self, header, where: str) -> numpy.ndarray:
        return numpy.asarray(header.label, numpy.float32)

    def _load(self, item):
        idx, row = item
        offset = self._offsets[idx]
        where = f"ImageDetRecordIter: {self.path_imgrec!r} record {idx} (byte offset {offset})"
        header, buf = recordio.unpack(self._rec._read_at(offset))
        label = self._check_label(header, offset).copy()
        rng = self._rng(idx, row)
        img = self._decode(buf, where)
        c, h, w = self.data_shape
        img = _resize(img, w, h, _interp(self._p.inter_method, img.shape[1::-1], (w, h), rng))
        if self._mirrored(rng):
            img = img[:, ::-1]
            hw, ow = int(label[0]), int(label[1])
            if ow >= 5:
                boxes = label[hw:].reshape(-1, ow)
                boxes[:, [1, 3]] = 1.0 - boxes[:, [3, 1]]
        out = numpy.full(4 + self._label_len, self._pad_value, numpy.float32)
        out[:4] = (c, h, w, label.size)
        out[4:4 + label.size] = label
        return self._finish(img, rng), out, header.id
