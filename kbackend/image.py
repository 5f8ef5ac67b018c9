"""Keras backend ``image``: not implemented yet (each function raises NotImplementedError)."""
from kbackend._missing import add_stubs

_NOT_YET = [
    "rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb", "resize", "affine_transform",
    "perspective_transform", "compute_homography_matrix", "map_coordinates",
    "gaussian_blur", "elastic_transform", "scale_and_translate", "sobel_edges",
]
add_stubs(globals(), "image", _NOT_YET)
