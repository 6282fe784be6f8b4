"""The memory explorer: a static page, and the file table that answers it both locally and from the API function."""
