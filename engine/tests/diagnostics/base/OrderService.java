package com.example.shop;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Places and cancels orders, applying the customer's discount.
 */
public class OrderService {
    private final OrderRepository repository;
    private final PaymentGateway payments;

    public OrderService(OrderRepository repository, PaymentGateway payments) {
        this.repository = repository;
        this.payments = payments;
    }

    public Order place(Customer customer, List<LineItem> items) {
        if (items.isEmpty()) {
            throw new IllegalArgumentException("an order needs at least one item");
        }
        BigDecimal total = BigDecimal.ZERO;
        for (LineItem item : items) {
            total = total.add(item.price().multiply(BigDecimal.valueOf(item.quantity())));
        }
        BigDecimal discount = customer.discountRate().multiply(total);
        Order order = new Order(customer.id(), new ArrayList<>(items), total.subtract(discount));
        payments.charge(customer, order.total());
        return repository.save(order);
    }

    public Optional<Order> cancel(String orderId) {
        Optional<Order> found = repository.findById(orderId);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        Order order = found.get();
        if (order.isShipped()) {
            throw new IllegalStateException("order " + orderId + " has shipped");
        }
        payments.refund(order.customerId(), order.total());
        order.markCancelled();
        return Optional.of(repository.save(order));
    }

    // Totals of every open order, for the dashboard.
    public BigDecimal openTotal() {
        BigDecimal sum = BigDecimal.ZERO;
        for (Order order : repository.findOpen()) {
            sum = sum.add(order.total());
        }
        return sum;
    }
}
