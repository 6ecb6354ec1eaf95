// Package server serves the inventory API over HTTP.
package server

import (
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Item is one stocked article.
type Item struct {
	ID       int       `json:"id"`
	Name     string    `json:"name"`
	Quantity int       `json:"quantity"`
	Updated  time.Time `json:"updated"`
}

// Store keeps items in memory, guarded by a mutex.
type Store struct {
	mu    sync.Mutex
	items map[int]*Item
	next  int
}

// ErrNotFound is returned for an unknown item ID.
var ErrNotFound = errors.New("item not found")

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{items: make(map[int]*Item), next: 1}
}

// Add stores a new item and returns its ID.
func (s *Store) Add(name string, quantity int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.items[id] = &Item{ID: id, Name: name, Quantity: quantity, Updated: time.Now()}
	return id
}

// Get returns a copy of the item with the given ID.
func (s *Store) Get(id int) (Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[id]
	if !ok {
		return Item{}, ErrNotFound
	}
	return *item, nil
}

// Adjust changes an item's quantity by delta; it never goes below zero.
func (s *Store) Adjust(id int, delta int) (Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[id]
	if !ok {
		return Item{}, ErrNotFound
	}
	item.Quantity += delta
	if item.Quantity < 0 {
		item.Quantity = 0
	}
	item.Updated = time.Now()
	return *item, nil
}

// Handler serves GET /items/{id} and POST /items/{id}/adjust?delta=N.
type Handler struct {
	store  *Store
	logger *log.Logger
}

// NewHandler wraps a store.
func NewHandler(store *Store, logger *log.Logger) *Handler {
	return &Handler{store: store, logger: logger}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		item, err := h.store.Get(id)
		if err != nil {
			h.fail(w, err)
			return
		}
		h.write(w, item)
	case http.MethodPost:
		delta, err := strconv.Atoi(r.URL.Query().Get("delta"))
		if err != nil {
			http.Error(w, "bad delta", http.StatusBadRequest)
			return
		}
		item, err := h.store.Adjust(id, delta)
		if err != nil {
			h.fail(w, err)
			return
		}
		h.logger.Printf("adjusted item %d by %d", id, delta)
		h.write(w, item)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	h.logger.Printf("internal error: %v", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

func (h *Handler) write(w http.ResponseWriter, item Item) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(item); err != nil {
		h.logger.Printf("encode: %v", err)
	}
}
