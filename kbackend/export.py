"""Keras backend ``export``: SavedModel export is not supported by kbackend."""


class KBackendExportArchive:
    def track(self, resource):
        raise NotImplementedError(
            "kbackend: export.track is not implemented in the kbackend Keras backend")

    def add_endpoint(self, name, fn, input_signature=None, **kwargs):
        raise NotImplementedError(
            "kbackend: export.add_endpoint is not implemented in the kbackend Keras "
            "backend")
