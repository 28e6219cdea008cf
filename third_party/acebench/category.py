ACE_DATA_CATEGORY = {

    "normal":[
        "normal_single_turn_single_function",
        "normal_single_turn_parallel_function",
        "normal_multi_turn_user_adjust",
        "normal_multi_turn_user_switch",
        "normal_similar_api",
        "normal_preference",
        "normal_atom_bool",
        "normal_atom_enum",
        "normal_atom_number",
        "normal_atom_list",
        "normal_atom_object_deep",
        "normal_atom_object_short",
    ],
    
    "special": [
        "special_incomplete", 
        "special_error_param",
        "special_irrelevant",
    ],

    "agent":[
        "agent_multi_step",
        "agent_multi_turn",
    ],

    "atom":[
        "normal_atom_bool",
        "normal_atom_enum",
        "normal_atom_number",
        "normal_atom_list",
        "normal_atom_object_deep",
        "normal_atom_object_short",
    ],

    "multi_turn":[
        "normal_multi_turn_user_adjust",
        "normal_multi_turn_user_switch",
    ],

    "test_all":[
        "normal_single_turn_single_function",
        "normal_single_turn_parallel_function",
        "normal_multi_turn_user_adjust",
        "normal_multi_turn_user_switch",
        "normal_similar_api",
        "normal_preference",
        "normal_atom_bool",
        "normal_atom_enum",
        "normal_atom_number",
        "normal_atom_list",
        "normal_atom_object_deep",
        "normal_atom_object_short",
        "special_incomplete", 
        "special_error_param",
        "special_irrelevant",
        "agent_multi_step",
        "agent_multi_turn",
    ]
    }