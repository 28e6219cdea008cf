from .io_utils import dump_file, load_file
from .pydantic_utils import get_pydantic_hash, update_pydantic_model_with_dict
from .utils import DATA_DIR, get_dict_hash, show_dict_diff
