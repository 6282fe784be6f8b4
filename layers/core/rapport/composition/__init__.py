"""The composition root: builds adapters from the settings and the services over them, once per process."""
